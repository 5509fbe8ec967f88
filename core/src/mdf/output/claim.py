"""The claim decision: may this run resume, replace or start the output it found, or is it refused (exit 2)?

Written once for local folders and ``s3://`` prefixes: :func:`mdf.output.local.claim` and
:meth:`mdf.output.remote.RemoteOutput.claim` only differ in how they look (a folder's files and record, a
prefix's listing, ``_SUCCESS`` and record) and in what they do with the answer (a staging folder and a swap; a
staging prefix and a publish). The four refusals, and the words each kind of output is named with, are here:

* ``--resume`` of an output that holds no run record, or one of another recipe (:meth:`Fingerprint.differs`);
* no flag on an output that is not empty (or holds a crashed run: ``--resume`` or ``--overwrite``);
* ``--overwrite`` of an output no mdf run wrote, or holding files the run that wrote it did not write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mdf import layout
from mdf.errors import MdfError


@dataclass(frozen=True)
class Words:
    """How messages name one kind of output and what is in it."""

    files: str  # "files" / "objects"
    place: str  # "folder" / "prefix"
    counted: str  # "file(s) the run that wrote it did not write"
    replaced: str  # what --overwrite deletes
    cannot_resume: str  # "{role}.path: ... {why}; use --overwrite" with {shown} and {why}


LOCAL = Words("files", "folder", "file(s) the run that wrote it did not write", "that run's part files",
              "cannot --resume '{shown}': {why}")  # fmt: skip
REMOTE = Words("objects", "prefix", "object(s) the run that wrote it did not publish",
               "the objects its _SUCCESS lists", "'{shown}': cannot --resume it: {why}")  # fmt: skip


@dataclass
class Found:
    """What a claim found at one output.

    :param record: the run record of the run a ``--resume`` would continue (its staging's if it has one).
    :param resumable: there is something to resume (a record, staged work, data).
    :param busy: the output is not empty (mdf's own lock aside).
    :param unrecorded: it holds data and no run record says which run wrote it.
    :param foreign: what ``--overwrite`` would leave (names the run that wrote it did not write); asked only for
        an ``--overwrite``.
    :param crashed: why an earlier run on this output stopped, if it crashed (local folders keep a note).
    """

    role: str
    shown: str
    words: Words
    record: dict[str, Any] | None
    resumable: bool
    busy: bool
    unrecorded: bool
    foreign: Callable[[], list[str]]
    crashed: str | None = None


def decide(found: Found, fp: Any, resume: bool, overwrite: bool, error: type[MdfError]) -> bool:
    """``True``: resume the run ``found.record`` names; ``False``: start afresh (replacing the output with
    ``overwrite``); else raise ``error`` (exit 2) with the one line that says why and what to do."""
    f, w = found, found.words
    where = f"{f.role}.path: '{f.shown}'"
    if resume and f.resumable:
        if f.record is None:
            raise error(f"{where} holds no mdf run record to resume; use --overwrite")
        why = fp.differs(f.record)
        if why is not None:
            raise error(f"{f.role}.path: " + w.cannot_resume.format(shown=f.shown, why=why) + "; use --overwrite")
        return True
    if f.busy and not overwrite:
        if f.crashed is not None:
            raise error(f"{where}: {f.crashed}; --resume continues it, --overwrite replaces it")
        raise error(
            f"{where} is not empty; pass --overwrite to replace it (kept until the new run succeeds) or --resume "
            "to continue the run that wrote it"
        )
    if overwrite and f.unrecorded:
        raise error(
            f"{where} holds {w.files} no mdf run wrote (no {layout.META}/run.json), so --overwrite will not delete "
            f"them; empty the {w.place} yourself or write elsewhere"
        )
    others = f.foreign() if overwrite else []
    if others:
        shown = ", ".join(repr(n) for n in others[:5]) + (f" and {len(others) - 5} more" if others[5:] else "")
        raise error(
            f"{where} holds {len(others)} {w.counted} ({shown}); --overwrite deletes only {w.replaced} and "
            f"{layout.META}/, so it will not replace the {w.place}; move them out or write elsewhere"
        )
    return False
