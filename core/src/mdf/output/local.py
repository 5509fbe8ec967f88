"""A run owns its output folders: an OS lock, a fingerprint, and no mixing with an earlier run's files.

Every folder a run writes (``writer.path`` and ``rejected.path``) is claimed before any work:

* **Lock.** ``fcntl.flock`` on ``<folder>/_mdf/lock`` for the whole run; the kernel drops it when the process
  dies, even by SIGKILL, so a stale lock never blocks the next run. A second run on the folder exits 2 naming
  the holder (pid, host, start time) written in the lock file.
* **Fingerprint** (:mod:`mdf.fingerprint`), written to ``_mdf/run.json`` before any data. ``--resume``
  continues only a run with the same fingerprint and otherwise says what changed.
* **Non-empty folders are refused** (Spark's ``errorifexists``): exit 2 naming ``--overwrite`` and ``--resume``.
* **``--overwrite`` never mixes and never loses the old output early.** The new output is built in a hidden
  sibling (``.<name>.mdf-staging``) and swapped with the old folder in one ``renameat2(RENAME_EXCHANGE)`` when
  the run succeeds; then the old one is deleted. A SIGKILL before the swap leaves the old output untouched (and
  the staging folder resumable with ``--resume``); after it, the new one. We chose staging over "move the old
  output aside first" because an interrupted or mistaken ``--overwrite`` then costs nothing, at the price of
  disk for both outputs until the swap. A swap interrupted between two folders (writer, then rejected) is
  rolled forward by the next run on that output, from the ``ready`` marker written before swapping.
* **``--overwrite`` replaces only what mdf wrote**: a non-empty folder without ``_mdf/run.json`` is refused, and
  so is one holding anything the earlier run did not write (:mod:`mdf.replace`: its part files are listed in its
  record); :mod:`mdf.output_paths` has already refused the working directory, an input, or overlapping outputs.
* **A refused run leaves nothing; a failed one says so.** Every folder is checked before any record is written,
  and a refusal (exit 2) takes back the folders, lock and record it made, so the next run is not refused for
  them. Any other failure (``^C`` and SIGTERM included) ends ``run.json`` as ``failed`` with the reason.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import hashlib
import json
import os
import shutil
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mdf import crash, layout
from mdf.errors import MdfError, RecipeError
from mdf.fingerprint import Fingerprint
from mdf.output.claim import LOCAL, Found, decide
from mdf.output.mirror import register
from mdf.output.remote import remote_output
from mdf.output_paths import check_inputs, output_dirs
from mdf.output_paths import check_output_paths as check_output_paths  # re-exported: mdf.checks runs it
from mdf.replace import READY, foreign, part_suffixes, parts_written, publish, roll_forward
from mdf.storage.redact import redact_text
from mdf.storage.urls import is_remote

# what a claim, the run log and the run's set-up (mdf.io.lineage, mdf.io.rejected) put in a new _mdf/ before data
_OURS = {"lock", "run.json", "run.json.tmp", "run.log", "shards.json", "shards.json.tmp", "rejected_schema.arrow",
         "rejected_schema.tmp"}  # fmt: skip


class OutputError(MdfError):
    """The output folder cannot be owned by this run (busy, not empty, different recipe); nothing was done."""

    exit_code = 2


@dataclass
class OwnedDir:
    role: str
    shown: str  # the path as the recipe wrote it, for messages
    published: Path
    work: Path
    fds: list[int] = field(default_factory=list)
    mode: str = "new"  # or "overwrite", kept across --resume
    made: list[Path] = field(default_factory=list)  # folders this claim created, outermost first
    made_files: list[Path] = field(default_factory=list)  # files it created in folders that were there
    resumed: bool = False
    remote: Any = None  # an s3:// output (mdf.output.remote.RemoteOutput): ``work`` is its local working folder

    @property
    def staged(self) -> bool:
        return self.work != self.published

    def undo(self) -> bool:
        """Take back what this claim created (files, then each folder it made while only mdf's own files are in
        it); ``True`` when no record of this run is left, so the folder is as the user had it."""
        for path in self.made_files:
            path.unlink(missing_ok=True)
        for folder in reversed(self.made):
            if not folder.is_dir():
                continue
            names = {p.name for p in folder.iterdir()}
            if folder.name == layout.META and names <= _OURS:
                for name in names:
                    (folder / name).unlink(missing_ok=True)
            try:
                folder.rmdir()
            except OSError:  # data was written after all: keep it, record the failure instead
                return False
        return not layout.run_record_path(self.work).exists()


@dataclass
class OwnedRun:
    """The claimed folders of one run; :meth:`finish` publishes them, :meth:`release` drops the locks."""

    plan: Any
    dirs: list[OwnedDir]
    fingerprint: Fingerprint
    resumed: bool
    published: bool = False  # finish() ran: an s3:// output's working folder may be emptied
    suffixes: list[str] | None = None  # of the part files the writers write (mdf.replace)

    @property
    def output(self) -> Path:
        """Where the kept rows are published (the writer's folder)."""
        return self.dirs[0].published if self.dirs else Path(self.plan.output_dir)

    def finish(self, metrics: Any) -> None:
        """Write metrics and the completed record, then swap staged folders into place (roll-forward safe)."""
        digest = None  # of metrics.json as written: `mdf report` tells a changed file from its own bug by it
        if self.dirs and self.dirs[0].role == "writer":
            written = metrics.write_json(layout.metrics_path(self.dirs[0].work))
            digest = hashlib.sha256(written.read_bytes()).hexdigest()
        for d in self.dirs:  # a local folder's record lists its part files: a later --overwrite deletes only those
            parts = None if d.remote is not None else parts_written(d.work, self.suffixes)
            _write_record(d.work, self.fingerprint, "complete", self.resumed, d.mode, suffixes=self.suffixes,
                          parts=parts, metrics_sha256=digest if d is self.dirs[0] else None)  # fmt: skip
        for d in self.dirs:
            if d.staged:
                _write_json(layout.meta_dir(d.work) / READY, {"published": str(d.published)})
        for d in self.dirs:
            if d.staged:
                publish(d.work, d.published)
        for d in self.dirs:
            if d.remote is not None:
                d.remote.publish()
        self.published = True

    def release(self) -> None:
        for d in self.dirs:
            for fd in d.fds:
                os.close(fd)
            d.fds.clear()
            if d.remote is not None:
                d.remote.release(keep_local=not self.published)

    def fail(self, exc: BaseException) -> None:
        """A refusal (exit 2, before data) takes back what the claim made, so the next run finds the folders as
        they were; any other failure ends ``run.json`` ``failed`` with the reason (``--resume`` continues it)."""
        refused = isinstance(exc, MdfError) and exc.exit_code == 2
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:2000]
        for d in self.dirs:
            if refused and d.remote is not None:
                d.remote.undo()
                shutil.rmtree(d.work, ignore_errors=True)
                continue
            if refused and d.undo():
                continue
            with contextlib.suppress(OSError):
                _write_record(d.work, self.fingerprint, "failed", d.resumed, d.mode, error=reason,
                              suffixes=self.suffixes)  # fmt: skip
            if d.remote is not None and d.remote.run_id and layout.run_record_path(d.work).exists():
                with contextlib.suppress(MdfError, OSError):
                    d.remote.upload_record(log=True)


def claim(plan: Any, overwrite: bool = False) -> OwnedRun:
    """Lock and check every output folder of ``plan``; return the plan rewritten to the folders to write.

    Every folder is checked before any is written, and a refusal takes back the lock folders it made: a run
    refused with exit 2 leaves nothing that would refuse the next one."""
    resume = bool(plan.recipe.executor.resume)
    if resume and overwrite:
        raise RecipeError("--resume and --overwrite exclude each other; pick one")
    check_inputs(output_dirs(plan.recipe), plan.reader.input_files(plan.shards))
    fp = Fingerprint.of(plan)
    owned = OwnedRun(plan, [], fp, resumed=False, suffixes=part_suffixes(plan.recipe, plan.plugins))
    try:
        for role, path in output_dirs(plan.recipe):
            overwriting = any(o.mode == "overwrite" for o in owned.dirs)
            d = OwnedDir(role, path, Path(path).absolute(), Path(path).absolute())
            owned.dirs.append(d)
            if is_remote(path):  # s3://: locked and staged there, written in a local working folder
                d.remote = remote_output(path, role)
                d.work = d.published = d.remote.claim({"recipe": str(plan.recipe.source)}, fp, resume, overwrite)
                _claim_dir(d, fp, resume, False)
                d.mode, d.resumed = d.remote.mode, d.remote.resumed
                register(d.remote)
            else:
                _claim_dir(d, fp, resume, overwrite, overwriting)
            owned.resumed = owned.resumed or d.resumed
        for d in owned.dirs:
            if not layout.run_record_path(d.work).exists() and layout.meta_dir(d.work) not in d.made:
                d.made_files.append(layout.run_record_path(d.work))
            _write_record(d.work, fp, "running", d.resumed, d.mode, suffixes=owned.suffixes)
            if d.remote is not None:
                d.remote.upload_record()
    except BaseException as exc:
        for d in owned.dirs:
            if d.remote is not None and isinstance(exc, MdfError):
                d.remote.undo()
            d.undo()
        owned.release()
        raise
    recipe = plan.recipe
    for d in owned.dirs:
        spec = getattr(recipe, d.role)
        spec = type(spec).model_validate({"type": spec.type, **spec.params, "path": str(d.work)})
        recipe = recipe.model_copy(update={d.role: spec})
    owned.plan = dataclasses.replace(plan, recipe=recipe, fingerprint=fp.sha)
    return owned


def _claim_dir(d: OwnedDir, fp: Fingerprint, resume: bool, overwrite: bool, overwriting: bool = False) -> None:
    """Lock one folder and decide where this run writes (``d.work``, ``d.mode``, ``d.resumed``). ``overwriting``:
    an earlier folder of this run was claimed by an ``--overwrite`` (now resumed), so this one may still hold the
    old run, never claimed."""
    role, path, published = d.role, d.shown, d.published
    d.fds.append(_lock(published, path, d))
    roll_forward(published)
    staging = layout.staging_dir(published)
    crash.note(published, locked=True)  # "running" under a lock we hold: that run crashed or was killed
    crash.note(staging)
    if resume:
        target = staging if layout.run_record_path(staging).exists() else published
        record = _read_record(target)
        unclaimed = target == published and overwriting and (record or {}).get("fingerprint") != fp.sha
        if not unclaimed:
            contents = _has_contents(target)
            found = Found(role, path, LOCAL, record, resumable=record is not None or contents, busy=contents,
                          unrecorded=False, foreign=list)  # fmt: skip
            d.mode, d.resumed = "new", False  # nothing there: a --resume of nothing starts it
            if decide(found, fp, True, False, OutputError):
                if target == staging:
                    d.fds.append(_lock(staging, path, d))
                    d.work = staging
                d.mode = (record or {}).get("mode", "new")
                d.resumed = True
            return
        overwrite = True  # a kill cut the --overwrite's claim short before it reached this folder
    record = _read_record(published)
    contents = _has_contents(published)
    dead = None if overwrite or not contents else crash.crashed(published) or crash.crashed(staging)
    found = Found(role, path, LOCAL, record, resumable=False, busy=contents, unrecorded=contents and record is None,
                  foreign=lambda: foreign(published, record) if published.is_dir() else [],
                  crashed=None if dead is None else dead["error"])  # fmt: skip
    decide(found, fp, False, overwrite, OutputError)
    if overwrite:
        shutil.rmtree(staging, ignore_errors=True)
        if _has_contents(published):
            staging.mkdir()
            d.made.append(staging)  # made here, so a refusal takes it back
            d.fds.append(_lock(staging, path, d))
            d.work = staging
    d.mode = "overwrite" if overwrite else "new"


def _lock(folder: Path, shown: str, d: OwnedDir) -> int:
    """Lock ``folder``; what is created on the way (missing parents, the folder, ``_mdf/``, the lock file) is
    noted on ``d`` once the lock is held, so a refusal takes it back, and a run that lost the race for the
    folder never takes back what the winner uses."""
    meta = layout.meta_dir(folder)
    missing = [p for p in (meta, folder, *folder.parents) if not p.exists()]
    new_lock = not layout.lock_path(folder).exists()
    meta.mkdir(parents=True, exist_ok=True)
    fd = os.open(layout.lock_path(folder), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        os.close(fd)
        try:
            h = json.loads(holder)
            who = f"pid {h['pid']} on {h['host']}, started {h['started']}"
        except (ValueError, KeyError, TypeError):
            who = "holder unknown"
        raise OutputError(f"'{shown}' is in use by another mdf run ({who}); wait for it or write elsewhere") from None
    d.made.extend(p for p in reversed(missing) if p not in d.made)
    if new_lock and meta not in d.made:
        d.made_files.append(layout.lock_path(folder))
    info = {"pid": os.getpid(), "host": socket.gethostname(), "started": _now()}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(info).encode(), 0)
    return fd


def _has_contents(folder: Path) -> bool:
    """Anything besides our own lock file counts (an earlier run's files, or a user's)."""
    if not folder.is_dir():
        return False
    for entry in folder.iterdir():
        if entry.name != layout.META:
            return True
        if any(x.name != "lock" for x in entry.iterdir()):
            return True
    return False


def _write_record(
    folder: Path,
    fp: Fingerprint,
    status: str,
    resumed: bool,
    mode: str = "new",
    error: str | None = None,
    suffixes: list[str] | None = None,
    parts: list[str] | None = None,
    metrics_sha256: str | None = None,
) -> None:
    record: dict[str, Any] = {
        "format": 1,
        "fingerprint": fp.sha,
        "status": status,
        "mode": mode,  # "overwrite": the run replaces an earlier output (what --resume must then finish)
        "resumed": resumed,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "updated": _now(),
        "recipe": fp.recipe,
        "inputs": fp.inputs,
        "files": fp.files,  # what the files the recipe names held when the run began (mdf.named_files)
        "part_suffixes": suffixes,  # with shards.json: the names this run may leave (mdf.replace)
    }
    if parts is not None:
        record["parts"] = parts  # every part file of the completed run: all a later --overwrite deletes
    if metrics_sha256 is not None:
        record["metrics_sha256"] = metrics_sha256
    if error is not None:
        record["error"] = error  # why a "failed" run stopped
    _write_json(layout.run_record_path(folder), record)


def _read_record(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads(layout.run_record_path(folder).read_text())
    except (OSError, ValueError):
        return None


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    blob = redact_text(json.dumps(data, indent=1, default=str)).encode()  # an error may quote an input URL
    try:
        with open(tmp, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno != errno.ENOSPC or not path.exists():
            raise
        with open(path, "r+b") as f:  # a full disk: rewrite the record in the block it already has
            f.write(blob)
            f.truncate()
        return
    os.replace(tmp, path)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
