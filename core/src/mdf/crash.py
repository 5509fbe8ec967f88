"""A run that ended without a word: SIGKILL, or a crash in native code (SIGSEGV, SIGBUS, SIGABRT).

SIGTERM, SIGHUP and ``^C`` unwind a run, which ends ``run.json`` ``failed`` (:mod:`mdf.terminate`). SIGKILL runs no
code at all, and after a crash no Python may run: the process state is broken. So ``run.json`` keeps saying
``running`` for a process that is gone. What is honest:

* **The crash's stack goes to the run log.** While a run runs, :mod:`faulthandler` writes to ``_mdf/run.log``
  (:func:`mdf.runlog.run_log` enables it): on SIGSEGV, SIGBUS, SIGABRT, SIGFPE or SIGILL it writes every
  thread's Python stack there (async-signal-safe C, nothing else runs), then lets the signal kill the process.
* **The next command on the output tells.** The kernel drops a ``flock`` when its holder dies, however it dies,
  so a ``run.json`` saying ``running`` beside a lock nobody holds was written by a process that is gone
  (:func:`dead_run`): the run crashed or was killed. ``mdf run`` (with any flag) records that in ``run.json``
  (``status: crashed``, the pid, host and where the log is) before it refuses or resumes, and ``mdf report`` says
  it instead of "no metrics.json".

Why not a watchdog process that outlives the run and writes ``crashed`` at once: one more process for every run
(and every Ray driver) to learn what the lock already tells the next command, and it could not tell a SIGKILL
from a crash either. ``run.json`` of a crashed run therefore says ``running`` until the next command looks; the
README says so. An ``s3://`` output has no flock: its lock object names the host and pid, and a dead holder's
lock is taken over by the next run (:mod:`mdf.storage.lock`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any

from mdf import layout

CRASHED = "crashed"


def dead_run(folder: str | os.PathLike[str], locked: bool = False) -> dict[str, Any] | None:
    """The record of the run that wrote ``folder`` when it says ``running`` and its process is gone (no one holds
    the output's lock; ``locked``: this process holds it, so the writer cannot), else ``None``."""
    try:
        record = json.loads(layout.run_record_path(folder).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("status") != "running":
        return None
    if locked:
        return record
    try:
        fd = os.open(layout.lock_path(folder), os.O_RDONLY)
    except OSError:
        return record  # no lock file: nothing holds the output
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return None  # alive: it holds the lock
    finally:
        os.close(fd)  # closing drops the lock taken just now
    return record


def describe(folder: str | os.PathLike[str], record: dict[str, Any]) -> str:
    """One line on a run that did not finish, for a message or for ``run.json``'s ``error``."""
    return (
        f"the run that wrote it did not finish: it crashed or was killed (pid {record.get('pid')} on "
        f"{record.get('host')}, last recorded {record.get('updated')}; a crash's stack is at the end of "
        f"{layout.log_path(folder)})"
    )


def note(folder: str | os.PathLike[str], locked: bool = False) -> dict[str, Any] | None:
    """Record in ``run.json`` that its run crashed or was killed (:func:`dead_run`), keeping the rest of the
    record; returns the record written, or ``None`` when the run is not a dead one."""
    record = dead_run(folder, locked)
    if record is None:
        return None
    record = {**record, "status": CRASHED, "error": describe(folder, record)}
    path = layout.run_record_path(folder)
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(OSError):  # a read-only output: the next command says it again
        tmp.write_text(json.dumps(record, indent=1, default=str))
        os.replace(tmp, path)
    return record


def crashed(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The record of a run noted as crashed (by :func:`note`), else ``None``."""
    try:
        record = json.loads(Path(layout.run_record_path(folder)).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("status") == CRASHED else None
