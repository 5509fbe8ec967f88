"""``--overwrite`` of a local output: what the earlier run wrote there, and the swap that replaces exactly that.

An output folder may hold more than mdf put in it: a user drops ``my-own-data.parquet`` or ``_notes.txt`` beside
the part files. ``--overwrite`` used to replace the whole folder, and those files went with it. Now it removes
only the earlier run's files, which mdf knows:

* a run that completed lists its part files in ``_mdf/run.json`` (``parts``), exactly;
* one that did not (killed, failed, or written by an mdf before the list) is known by its shards
  (``_mdf/shards.json``: every part file is ``<shard id>[.<piece>]<suffix>``, ``.tmp`` while being written; the
  suffix is its writer's, recorded in ``run.json`` as ``part_suffixes``);
* ``_mdf/`` is mdf's own.

Anything else in the folder (a file, a folder, a link) makes ``--overwrite`` refuse before any work, exit 2,
naming it. The new output is still built in a hidden sibling and swapped in with one ``renameat2`` when the run
succeeds (:mod:`mdf.output.local`); then the old run's files are deleted from the folder swapped out, and should a
user have put a file into the old output while the new one was being built, the folder is kept beside the output
(``<name>.mdf-kept-<time>``) with that file in it and the run log says so: nothing is deleted that mdf did not
write.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mdf import layout
from mdf.io.lineage import read_shard_map
from mdf.runlog import LOG

READY = "ready"
_PART = re.compile(r"(?P<id>[^.]+)(?:\.\d+)?(?P<suffix>(?:\.[^.]+)*?)(?:\.tmp)?")


def part_suffixes(recipe: Any, plugins: Any) -> list[str] | None:
    """The suffixes of the part files the recipe's writers write (``.parquet``, ``.jsonl.gz``), or ``None`` when
    a writer does not say (a plugin's writer that is no :class:`~mdf.io.files.PartFiles`): any suffix then."""
    from mdf.io.files import PartFiles

    out = []
    for spec in (recipe.writer, recipe.rejected):
        if spec is None or spec.type == "discard":
            continue
        cls = plugins.writers.get(spec.type, "writer.type")
        if not (isinstance(cls, type) and issubclass(cls, PartFiles)):
            return None
        out.append(cls.part_suffix(cls.Params(**spec.params)))
    return sorted(set(out))


def written_by(record: dict[str, Any] | None, folder: Path) -> Callable[[str], bool]:
    """Whether a name in ``folder`` (an output) is a file the run of ``record`` (its ``run.json``) wrote."""
    record = record if isinstance(record, dict) else None
    if record is not None and isinstance(record.get("parts"), list):
        listed = set(record["parts"])
        return lambda name: name in listed
    ids = set(read_shard_map(str(folder))) if (layout.meta_dir(folder) / "shards.json").exists() else set()
    suffixes = record.get("part_suffixes") if record is not None else None

    def ours(name: str) -> bool:
        m = _PART.fullmatch(name)
        if m is None or m["id"] not in ids:
            return False
        return suffixes is None or m["suffix"] in suffixes

    return ours


def parts_written(folder: Path, suffixes: list[str] | None) -> list[str]:
    """The part files in ``folder`` written by the run whose shards ``_mdf/shards.json`` lists: what ``run.json``
    names when the run ends (a file a user added between a kill and ``--resume`` is not among them)."""
    ours = written_by({"part_suffixes": suffixes}, folder)
    names = [e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False) and not e.name.endswith(".tmp")]
    return sorted(n for n in names if ours(n))


def foreign(folder: Path, record: dict[str, Any] | None) -> list[str]:
    """Names in ``folder`` that the run of ``record`` did not write (``_mdf/`` aside), sorted."""
    ours = written_by(record, folder)
    out = []
    for entry in os.scandir(folder):
        if entry.name == layout.META:
            continue
        if entry.is_symlink() or not entry.is_file() or not ours(entry.name):
            out.append(entry.name)
    return sorted(out)


def discard(old: Path, published: Path) -> Path | None:
    """Delete the earlier run's files from ``old`` (the folder swapped out of ``published``); a name it did not
    write (put there while the new output was built) is kept: the folder is moved beside the output and
    returned."""
    if not old.is_dir():
        return None
    record = _read_record(old)
    ours = written_by(record, old)
    for entry in list(os.scandir(old)):
        if entry.name != layout.META and not entry.is_symlink() and entry.is_file() and ours(entry.name):
            os.unlink(entry.path)
    shutil.rmtree(layout.meta_dir(old), ignore_errors=True)
    try:
        old.rmdir()
        return None
    except OSError:
        pass
    kept = published.parent / f"{published.name}.mdf-kept-{time.strftime('%Y%m%dT%H%M%S')}"
    os.rename(old, kept)
    LOG.warning("--overwrite: %s held files no mdf run wrote (%s), put there while this run ran; kept in %s",
                published, ", ".join(sorted(os.listdir(kept))[:10]), kept)  # fmt: skip
    return kept


def roll_forward(published: Path) -> None:
    """Finish a swap a killed run had begun (staging marked ``ready``), or drop the swapped-out old output."""
    staging = layout.staging_dir(published)
    marker = layout.meta_dir(published) / READY
    if (layout.meta_dir(staging) / READY).exists():
        publish(staging, published)
    elif marker.exists():  # killed right after the swap: staging now holds the old output
        marker.unlink()
        discard(staging, published)
    aside = published.parent / f".{published.name}.mdf-old"
    shutil.rmtree(aside, ignore_errors=True)


def publish(staging: Path, published: Path) -> None:
    """Swap the staged new output into place, then delete what the old run wrote from the folder swapped out."""
    _exchange(staging, published)
    (layout.meta_dir(published) / READY).unlink(missing_ok=True)
    discard(staging, published)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> None:
    """Swap two folders atomically (Linux ``renameat2``); elsewhere two renames, rolled forward if cut."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        fn = None
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(err, os.strerror(err), str(b))
    aside = b.parent / f".{b.name}.mdf-old"
    if b.exists():
        os.rename(b, aside)
    os.rename(a, b)
    os.rename(aside, a)


def _read_record(folder: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(layout.run_record_path(folder).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None
