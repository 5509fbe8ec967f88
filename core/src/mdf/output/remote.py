"""An ``s3://bucket/prefix`` output: the local run machinery, mirrored to a staging prefix, published at the end.

Design. Every writer, the checkpoint and the key-state snapshots stay as they are and write a local working
folder (``~/.cache/mdf/outputs/<hash>-<run_id>``, or ``$MDF_CACHE_DIR``); this module makes the S3 prefix the
place of record:

* **Owned** by an :class:`~mdf.storage.lock.S3Lock` at ``<output>/_mdf/lock`` (conditional PUT, renewed while
  the run lives; a second run exits 2 naming the holder). A lock whose holder was on this host and whose process
  is gone (kill -9) is taken over at once; one from another host once stale.
* **Mirrored at every checkpoint**: :func:`mdf.output.mirror.sync_all` (called by
  :class:`mdf.state.checkpoint.Checkpoint` after each snapshot) has a background thread upload, while the run
  goes on, the committed part files (as open multipart uploads to their final keys) and the ``_mdf/`` files that
  changed (to ``<output>/_mdf/staging/<run_id>/``), the checkpoint manifest last. So what S3 holds is always a
  consistent checkpoint: ``--resume`` on another machine, or after the temp folder was cleaned, downloads the
  staging prefix's ``_mdf/`` and continues from the committed shards; nothing of a running or killed run is
  visible at ``<output>/`` (``_``-prefixed prefixes are hidden from dataset readers).
* **Published** on success by :func:`mdf.output.publish.publish`: the parts' open multipart uploads completed
  (a part goes up to its final key as the mirror sees it, invisible until then: :mod:`mdf.storage.multipart`),
  deletion of an older run's parts, the run's ``_mdf/`` files (``run.json``, ``metrics.json``, ``shards.json``,
  key-state snapshots), then ``_SUCCESS`` listing exactly the parts.

On Ray the writer actors may run on other machines, which cannot see the driver's working folder: each writes
its parts in a folder on its own node and uploads a shard's parts to the staging prefix (as objects, copied at
the publish) before its commit returns (:mod:`mdf.executor.ray.parts`); the driver mirrors only ``_mdf/``, so the
manifest still comes last.

Why not write part files straight to S3: the writers, ``--resume``, the schema pieces and the report all work on
files, and a part upload needs the finished file anyway to be retried whole; one upload per committed part costs
what a streamed upload would, and keeps one code path for local and S3 outputs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mdf import layout
from mdf.errors import MdfError
from mdf.output import publish
from mdf.output.claim import REMOTE, Found, decide
from mdf.output.mirror import forget, wait_mirrored
from mdf.runlog import LOG
from mdf.storage import urls

if TYPE_CHECKING:  # the S3 layer (pyarrow.fs, ssl: ~25 ms) is imported by an s3:// output only, not by every run
    from mdf.storage.fs import Storage
    from mdf.storage.lock import S3Lock

_MANIFEST = "_mdf/state/manifest.json"
_UPLOADS_FILE = "_mdf/uploads.json"  # on the staging prefix only: the open multipart uploads of the parts
_GUARD = threading.Lock()
_SKIP = {"_mdf/lock"}
_PROBE = f"{layout.META}/write-probe-"  # check_writable's object, left only where a DELETE was refused
_UPLOADS = 8


class RemoteRefused(MdfError):
    """The S3 output cannot be owned by this run (not empty, foreign objects, another recipe); nothing done."""

    exit_code = 2


def cache_root() -> Path:
    return Path(os.environ.get("MDF_CACHE_DIR") or Path.home() / ".cache" / "mdf") / "outputs"


@dataclass
class RemoteOutput:
    """One S3 output folder of a run: its lock, staging prefix and local working folder."""

    url: str
    role: str
    storage: Storage
    lock: S3Lock | None = None
    run_id: str = ""
    work: Path = field(default_factory=Path)
    mode: str = "new"
    resumed: bool = False
    made_staging: bool = False
    uploaded: dict[str, tuple[int, int]] = field(default_factory=dict)  # rel path -> (size, mtime_ns)
    moved: set[str] = field(default_factory=set)  # part files uploaded, then deleted here (S3 holds them)
    sent: bytes | None = None  # the checkpoint manifest last uploaded
    uploads: dict[str, dict[str, Any]] = field(default_factory=dict)  # part name -> its open multipart upload
    uploads_made: int = 0  # changes to ``uploads``: the staging prefix's uploads.json is sent when they are new
    uploads_sent: int = 0
    failed: BaseException | None = None  # a background mirror round's error, raised by the run's next checkpoint

    @property
    def staging(self) -> str:
        return publish.staging_prefix(self.url, self.run_id)

    # -- claiming ---------------------------------------------------------------------------------------------
    def claim(self, holder: dict[str, Any], fp: Any, resume: bool, overwrite: bool) -> Path:
        """Lock the prefix, decide this run's staging and mode, fill the working folder; returns the folder.
        ``fp``: the run's :class:`~mdf.fingerprint.Fingerprint` (``differs(record)`` says why a resume may not)."""
        from mdf.storage.lock import S3Lock

        self.lock = S3Lock(urls.join(self.url, layout.META, "lock"), holder, storage=self.storage)
        self.lock.acquire()
        publish.roll_forward(self.storage, self.url)
        here = self.storage.list(self.url, hidden=True)
        prefix = self.url.rstrip("/") + "/"
        names = [o.url[len(prefix) :] for o in here]
        data = [n for n in names if layout.is_data_name(n.split("/")[0])]
        record = self._read(urls.join(self.url, layout.META, "run.json"))
        staged = self._staged_runs(names)
        key = hashlib.sha256(self.url.encode()).hexdigest()[:12]
        root = cache_root()
        for old in root.glob(f"{key}-*") if root.is_dir() else []:  # we hold the lock: no live run uses them
            shutil.rmtree(old, ignore_errors=True)
        source = staged[-1] if resume and staged else None
        busy = data or any(n not in _SKIP and not n.startswith(_PROBE) for n in names if not layout.is_data_name(n))

        def others() -> list[str]:  # the earlier run published exactly what its _SUCCESS lists: nothing else goes
            listed = set(publish.committed_names(self.storage, self.url) or [])
            return [n for n in names if n not in listed and n != publish.SUCCESS and n.split("/")[0] != layout.META]

        found = Found(self.role, self.url, REMOTE,
                      self._read(urls.join(self.url, layout.META, "staging", source, layout.META, "run.json"))
                      if source else record, resumable=bool(staged or record is not None or data), busy=bool(busy),
                      unrecorded=bool(data) and record is None, foreign=others)  # fmt: skip
        if decide(found, fp, resume, overwrite, RemoteRefused):
            assert found.record is not None
            self.mode, self.resumed = found.record.get("mode", "new"), True
            self.run_id = source or uuid.uuid4().hex[:16]
            self.work = root / f"{key}-{self.run_id}"
            if source:
                self._download(urls.join(self.staging, layout.META), self.work / layout.META)
                self.uploads = self._read(urls.join(self.staging, _UPLOADS_FILE)) or {}
            else:  # a completed output: its parts become this run's staged parts (server-side), its state ours
                self._download(urls.join(self.url, layout.META), self.work / layout.META)
                listed = publish.committed_names(self.storage, self.url)  # a user's objects beside them stay theirs
                for name in data if listed is None else [n for n in data if n in listed]:
                    self.storage.copy(urls.join(self.url, name), urls.join(self.staging, name))
                self.made_staging = True
            self._forget_local_only()
            return self.work
        for run_id in staged:  # killed runs' staging: --overwrite starts over
            self.storage.delete_prefix(urls.join(self.url, layout.META, "staging", run_id))
        from mdf.storage import multipart  # with the S3 layer: not imported by a run without an s3:// output

        multipart.sweep(self.storage, self.url)  # killed runs' open uploads: never to be completed
        self.mode = "overwrite" if data or record is not None else "new"
        self.run_id = uuid.uuid4().hex[:16]
        self.work = root / f"{key}-{self.run_id}"
        self.made_staging = True
        return self.work

    def _staged_runs(self, names: list[str]) -> list[str]:
        """Run ids with a record under ``_mdf/staging/``, oldest first."""
        found = []
        for n in names:
            parts = n.split("/")
            if len(parts) == 5 and parts[:2] == [layout.META, "staging"] and parts[3:] == [layout.META, "run.json"]:
                found.append(parts[2])
        stamp = {r: self.storage.info(urls.join(self.url, layout.META, "staging", r, layout.META, "run.json")).mtime_ns
                 for r in found}  # fmt: skip
        return sorted(found, key=lambda r: stamp[r] or 0)

    def _read(self, url: str) -> dict[str, Any] | None:
        if not self.storage.exists(url):
            return None
        try:
            return json.loads(self.storage.read_bytes(url))
        except ValueError:
            return None

    def _download(self, prefix: str, into: Path) -> None:
        for obj in self.storage.list(prefix, hidden=True):
            rel = obj.url[len(prefix.rstrip("/")) + 1 :]
            if rel == "lock" or rel.startswith(("staging/", publish.INTENT)) or rel == _UPLOADS_FILE.split("/")[1]:
                continue
            target = into / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.storage.read_bytes(obj.url))

    def _forget_local_only(self) -> None:
        """What was downloaded is on S3 already: no need to upload it again."""
        for path in self._local_files():
            st = path.stat()
            self.uploaded[path.relative_to(self.work).as_posix()] = (st.st_size, st.st_mtime_ns)

    # -- mirroring --------------------------------------------------------------------------------------------
    def _local_files(self) -> list[Path]:
        out = []
        for folder, _, files in os.walk(self.work):
            for name in files:
                if not name.endswith(".tmp") and ".tmp-" not in name and ".mdf-" not in name:
                    out.append(Path(folder) / name)
        return out

    def manifest_now(self) -> bytes | None:
        """The checkpoint manifest as it is now: read before any file is looked at, so every part and snapshot it
        names is already on the local disk (or on S3)."""
        try:
            return (self.work / _MANIFEST).read_bytes()
        except FileNotFoundError:
            return None

    def sync(self, manifest: bytes | None) -> None:
        """Upload what changed since the last sync, then ``manifest`` (read by :meth:`manifest_now` before this
        round looked at any output) once every snapshot it names is on S3; part files are deleted locally once
        uploaded. Then delete from the staging prefix what is gone locally and the new manifest does not name
        (a key-state snapshot of an older generation).

        The run goes on writing while a round runs (:mod:`mdf.output.mirror`): a snapshot file replaced before
        it was read is skipped, and so is a manifest whose snapshots did not all make it; the next round sends
        both."""
        changed = []
        present = set()
        for path in self._local_files():
            rel = path.relative_to(self.work).as_posix()
            if rel in _SKIP or rel == _MANIFEST:
                continue
            present.add(rel)
            try:
                st = path.stat()
            except FileNotFoundError:  # replaced while we looked: the next sync has it
                continue
            if self.uploaded.get(rel) != (st.st_size, st.st_mtime_ns):
                changed.append((rel, path, (st.st_size, st.st_mtime_ns)))

        from mdf.storage import multipart

        def put(item: tuple[str, Path, tuple[int, int]]) -> None:
            rel, path, stamp = item
            part = "/" not in rel and layout.is_data_name(rel)  # a committed part file
            try:
                if part:  # to its final key, invisible until the publish completes it (mdf.storage.multipart)
                    upload = multipart.begin(self.storage, str(path), urls.join(self.url, rel))
                else:
                    self.storage.put_file(str(path), urls.join(self.staging, rel))
            except FileNotFoundError:  # an older snapshot, removed by the next checkpoint: not needed
                return
            self.uploaded[rel] = stamp
            if part:
                self.add_upload(rel, upload)
                path.unlink(missing_ok=True)  # the local disk need not hold the whole output (a redone shard
                self.moved.add(rel)  # writes and uploads it again)

        with ThreadPoolExecutor(_UPLOADS) as pool:
            list(pool.map(put, changed))
        if self.uploads_made != self.uploads_sent:  # before the manifest that counts on them
            with _GUARD:
                made, listed = self.uploads_made, json.dumps(self.uploads).encode()
            self.storage.write_bytes(urls.join(self.staging, _UPLOADS_FILE), listed)
            self.uploads_sent = made
        if manifest is None or manifest == self.sent:
            return
        state = _MANIFEST.rsplit("/", 1)[0]
        named = {f"{state}/{name}" for name in json.loads(manifest).get("buckets", [])}
        if not named <= self.uploaded.keys():
            return  # a snapshot it names was replaced before we read it: the next round's manifest names the new one
        self.storage.write_bytes(urls.join(self.staging, _MANIFEST), manifest)
        self.sent = manifest
        for rel in [r for r in self.uploaded if r not in present and r not in self.moved and r not in named]:
            self.storage.delete(urls.join(self.staging, rel))
            del self.uploaded[rel]

    def add_upload(self, rel: str, upload: dict[str, Any]) -> None:
        """Note part ``rel``'s open multipart upload (made by the mirror, or by a Ray writer on its node)."""
        with _GUARD:
            old, self.uploads[rel] = self.uploads.get(rel), upload
            self.uploads_made += 1
        if old is not None:  # a redone shard's part: its first upload will never be completed
            from mdf.storage import multipart

            multipart.abort(self.storage, urls.join(self.url, rel), old["upload_id"])

    def upload_record(self, log: bool = False) -> None:
        """``run.json`` (and with ``log`` the run log) to the staging prefix, and the record to ``<output>/_mdf/``
        too while no earlier run's output is there; after the mirror's rounds (a failed run's last checkpoint)."""
        wait_mirrored()
        local = layout.run_record_path(self.work)
        self.storage.put_file(str(local), urls.join(self.staging, layout.META, "run.json"))
        if log and layout.log_path(self.work).exists():
            self.storage.put_file(str(layout.log_path(self.work)), urls.join(self.staging, layout.META, "run.log"))
        if self.mode == "new":
            self.storage.put_file(str(local), urls.join(self.url, layout.META, "run.json"))

    # -- ending -----------------------------------------------------------------------------------------------
    def publish(self) -> None:
        """Upload the rest, check the lock is still ours, then publish the parts and the run's ``_mdf/`` files."""
        start = time.perf_counter()
        wait_mirrored(self)
        self.sync(self.manifest_now())
        assert self.lock is not None
        self.lock.check()
        synced = time.perf_counter()
        staged = self._staged()
        parts = sorted({r for r in staged if layout.is_data_name(r.split("/")[0])} | self.uploads.keys())
        meta = sorted(r for r in staged if r.startswith(layout.META + "/") and r != _UPLOADS_FILE)
        publish.publish(self.storage, self.url, self.run_id, parts, meta=meta, uploads=self.uploads)
        LOG.info("%s: %d part(s) published in %.2fs (last upload %.2fs)", self.url, len(parts),
                 time.perf_counter() - synced, synced - start)  # fmt: skip

    def _staged(self) -> list[str]:
        prefix = self.staging.rstrip("/") + "/"
        return [o.url[len(prefix) :] for o in self.storage.list(self.staging, hidden=True)]

    def put_meta(self, local: Path) -> None:
        """One more ``_mdf/`` file (the report) straight to ``<output>/_mdf/`` after the publish."""
        self.storage.put_file(str(local), urls.join(self.url, layout.META, local.name))

    def undo(self) -> None:
        """A refusal (exit 2 before any data): take back the staging prefix and record this run made."""
        if self.made_staging and self.run_id:
            with contextlib.suppress(MdfError):
                self.storage.delete_prefix(self.staging)
                if self.mode == "new" and not self.resumed:
                    self.storage.delete(urls.join(self.url, layout.META, "run.json"))

    def release(self, keep_local: bool = True) -> None:
        wait_mirrored()  # no upload of this run's may outlive its lock
        forget(self)
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        if not keep_local:  # published: the working folder's data is on S3 now; keep the report for the terminal
            for entry in self.work.iterdir() if self.work.is_dir() else []:
                if entry.name != layout.META:
                    entry.unlink() if entry.is_file() else shutil.rmtree(entry, ignore_errors=True)
            shutil.rmtree(layout.state_dir(self.work), ignore_errors=True)


def check_writable(url: str, role: str) -> None:
    """Before any work (``validate`` and ``run``): this process can write and delete under the output prefix, and
    has botocore for the lock's conditional PUTs. One empty object ``<output>/_mdf/write-probe-<id>`` is PUT and
    DELETEd: S3 has no "may I" request, and a read-only identity, a missing bucket or a lacking ``s3:DeleteObject``
    otherwise failed the run at its lock or at its publish (exit 1, after the work). Exit 2 naming the key."""
    from mdf.errors import MissingDependencyError, RecipeError
    from mdf.storage.fs import default
    from mdf.storage.retry import RetryPolicy, call
    from mdf.storage.s3client import s3_client

    try:
        client = s3_client(default().settings)
    except MissingDependencyError:
        raise RecipeError(f"'{url}': an s3:// output needs botocore (its lock and publish use conditional PUTs): "
                          "pip install 'mdf-core[storage]'", f"{role}.path") from None  # fmt: skip
    bucket, _, prefix = urls.strip_scheme(url).partition("/")
    key = f"{prefix.strip('/')}/{_PROBE}{uuid.uuid4().hex[:12]}"
    policy = RetryPolicy(attempts=default().settings.s3.max_attempts)
    try:
        call(lambda: client.put_object(Bucket=bucket, Key=key, Body=b""), url, "a test write", policy)
        call(lambda: client.delete_object(Bucket=bucket, Key=key), url, "a test delete", policy)
    except MdfError as exc:
        what = getattr(exc, "message", str(exc))
        raise RecipeError(f"'{url}' cannot be written with these credentials and settings ({what}); a run needs to "
                          "PUT and DELETE objects there: use credentials that may, or write elsewhere",
                          f"{role}.path") from None  # fmt: skip


def remote_output(url: str, role: str, storage: Storage | None = None) -> RemoteOutput:
    from mdf.storage.fs import default

    return RemoteOutput(url.rstrip("/"), role, storage or default())
