"""The dedup index on object storage: the same operations as :class:`~mdf_dedup.index.files.IndexFiles`, on
``s3://`` (read and write) or any URL :mod:`mdf.storage` reads (``https://``, ``gs://``...: read only).

* **Generations** are immutable objects, each written by one PUT of the finished file (it appears whole or not
  at all). A run reads the ones its bucket needs into memory (8 bytes a key; no memory-mapping over a network):
  one HEAD checks the size the manifest recorded (a truncated or missing object: exit 1 naming its URL), one
  GET reads it.
* **The manifest** is one object, ``manifest.json``, replaced by a conditional PUT: ``If-Match`` on the ETag the
  run read (``If-None-Match: *`` for a new index). The alternative, a new manifest object per generation plus a
  pointer written last, needs the same conditional write for the pointer (two runs racing would otherwise each
  write one and lose the other's generation), and costs a second GET on every read and a listing to clean up;
  the single object keeps ``mdf index info`` at one GET. The lock already keeps a second writer out; the
  condition is what makes a run whose lock was taken over (stale) fail instead of losing the other's update.
* **The lock** ``_lock.json`` is :class:`mdf.storage.S3Lock` (conditional create, renewed by a thread of the
  process that took it, taken over ``ttl_s`` after its last renewal by the server's clock). Every bucket of a
  run asks for it; the first takes and renews it, the others find it held by their own run (same fingerprint
  and output) and go on. The driver releases it after publishing: the holder itself when it runs in the driver
  (inline), else by a conditional DELETE on the ETag it reads (Ray: the renewing actor is killed at the end of
  the run). A failed run's lock is released when its bucket state is collected or the process exits; one whose
  process was killed is taken over after ``ttl_s``.
"""

from __future__ import annotations

import atexit
import contextlib
import io
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from mdf import OperatorError
from mdf.storage import (
    LockHeld,
    ObjectNotFound,
    PreconditionFailed,
    S3Lock,
    Storage,
    StorageSettings,
    default,
    delete_if,
    join,
    scheme_of,
)
from mdf_dedup.index.checksums import check_digest, digest
from mdf_dedup.index.errors import IndexBusy
from mdf_dedup.index.versioned import VersionedFiles

LOCK_TTL_S = 60.0
WRITABLE = ("s3", "s3a")

_HELD: dict[tuple[str, str, str], S3Lock] = {}  # (lock URL, run fingerprint, run output) -> lock renewed here
_STORAGES: dict[str, Storage] = {}


def storage_for(settings: StorageSettings | None) -> Storage:
    """The process's storage layer, or one for ``settings`` (a Ray bucket gets the recipe's from the operator)."""
    if settings is None or settings == default().settings:
        return default()
    key = settings.model_dump_json()
    if key not in _STORAGES:
        _STORAGES[key] = Storage(settings)
    return _STORAGES[key]


class ObjectIndexFiles(VersionedFiles):
    """The objects under one index URL (the manifest's versioned read and replace: :class:`VersionedFiles`)."""

    remote = True

    def __init__(self, url: str, settings: StorageSettings | None = None) -> None:
        self.root = url.rstrip("/")
        self.scheme = scheme_of(url)
        self.storage = storage_for(settings)
        self.writable = self.scheme in WRITABLE

    def path(self, name: str) -> str:
        return join(self.root, name)

    # -- reading ----------------------------------------------------------------------------------------------
    def exists(self, name: str) -> bool:
        return self.storage.exists(self.path(name))

    def size(self, name: str) -> int | None:
        try:
            return self.storage.info(self.path(name)).size
        except ObjectNotFound:
            return None

    def read(self, name: str) -> bytes | None:
        try:
            return self.storage.read_bytes(self.path(name))
        except ObjectNotFound:
            return None

    def load_keys(self, name: str, size: int, checksum: str | None = None) -> np.ndarray:
        """A keys file (``.npy``) read whole into memory, read-only, without a copy of its bytes; its content
        checked with ``checksum``."""
        url = self.path(name)
        with self.storage.open_input(url, size=size) as f:
            data = f.read()
        if len(data) != size:  # replaced between the HEAD and the GET
            raise OperatorError(f"index generation file {url} is truncated or altered ({len(data)} bytes, the "
                                f"manifest says {size}); restore it, or rebuild the index")  # fmt: skip
        check_digest(url, digest(data), checksum)
        buf = io.BytesIO(data)
        fmt = np.lib.format
        header = fmt.read_array_header_1_0 if fmt.read_magic(buf) == (1, 0) else fmt.read_array_header_2_0
        shape, _, dtype = header(buf)
        return np.frombuffer(data, dtype=dtype, count=int(np.prod(shape)), offset=buf.tell())

    def open_table(self, name: str, checksum: str | None = None) -> Any:
        """What :func:`pyarrow.parquet.read_table` reads ``name`` from: ranged GETs, or with ``checksum`` the object
        read whole and checked (a sources file is read whole anyway)."""
        if checksum is None:
            return self.storage.open_random(self.path(name))
        data = self.storage.read_bytes(self.path(name))
        check_digest(self.path(name), digest(data), checksum)
        return io.BytesIO(data)

    def verify(self, name: str, checksum: str | None) -> None:
        """:func:`~.checksums.check_digest` of the object ``name`` (nothing read without ``checksum``)."""
        if checksum is not None:
            check_digest(self.path(name), digest(self.storage.read_bytes(self.path(name))), checksum)

    def list(self, prefix: str = "") -> list[str]:
        base = self.root + "/"
        return [o.url[len(base) :] for o in self.storage.list(self.path(prefix), hidden=True)]

    # -- writing ----------------------------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if not self.writable:
            raise OperatorError(f"index {self.root}: {self.scheme}:// is read only; an index is written to s3:// "
                                "or a local folder")  # fmt: skip

    def publish(self, name: str, write: Callable[[BinaryIO], None]) -> int:
        """Write ``name`` as one object (one PUT, or a multipart upload completed at once): whole or absent."""
        self._check_writable()
        buf = io.BytesIO()
        write(buf)
        data = buf.getvalue()
        self.storage.write_bytes(self.path(name), data)
        return len(data)

    def delete(self, name: str) -> None:
        """One DELETE (``DeleteObjects``: pyarrow's ``delete_file`` leaves a ``folder/`` marker object behind on the
        last one)."""
        self._check_writable()
        self.storage.delete_many([self.path(name)])

    # -- the lock ---------------------------------------------------------------------------------------------
    def _lock(self, run: dict[str, Any] | None = None) -> S3Lock:
        holder = None if run is None else {"run_id": run.get("output"), **_who(run)}
        return S3Lock(self.path("_lock.json"), holder, ttl_s=LOCK_TTL_S, storage=self.storage)

    def acquire_lock(self, run: dict[str, Any]) -> bool:
        """Take the lock for ``run``, or find it held by ``run`` (another bucket); ``True`` if this process holds
        it. :class:`~mdf_dedup.index.manifest.IndexBusy` naming a live holder of another run."""
        self._check_writable()
        key = _key(self.root, run)
        held = _HELD.get(key)
        if held is not None and not held.lost:
            return True
        lock = self._lock(run)
        try:
            lock.acquire()
        except LockHeld:
            current = self.lock_holder()
            if current is not None and _same_run(current, run):
                return False  # another bucket of this run took it and renews it
            busy = self.describe(current) if current else f"index {self.root}: lock taken meanwhile; retry"
            raise IndexBusy(busy) from None
        _HELD[key] = lock
        return True

    def lock_holder(self) -> dict[str, Any] | None:
        """The holder of the lock, with ``age_s`` (since its last renewal, by the server's clock), ``ttl_s`` and
        ``alive`` (renewed within ``ttl_s``); ``None`` when there is no lock."""
        if not self.writable:
            return None
        current = self._lock().read()
        if current is None:
            return None
        return {**current["holder"], "age_s": current["age_s"], "ttl_s": current["ttl_s"], "etag": current["etag"],
                "alive": current["age_s"] <= current["ttl_s"]}  # fmt: skip

    def check_lock(self, run: dict[str, Any]) -> None:
        """Before publishing: the lock is still ``run``'s (not taken over as stale), else fail, publishing nothing."""
        current = self.lock_holder()
        if current is None or not _same_run(current, run):
            by = f"taken over by the run writing {current.get('output')}" if current else "deleted"
            raise OperatorError(f"index {self.root}: this run's lock was {by} (not renewed for {LOCK_TTL_S:.0f} s); "
                                "nothing published: run again")  # fmt: skip

    def release_lock(self, run: dict[str, Any]) -> None:
        """Release ``run``'s lock: the holder's own release if this process renews it, else a DELETE conditional on
        the ETag read (a renewal in between changes it: read again)."""
        held = _HELD.pop(_key(self.root, run), None)
        if held is not None:
            held.release()
            return
        for _ in range(5):
            current = self.lock_holder()
            if current is None or not _same_run(current, run):
                return
            try:
                delete_if(self.storage, self.path("_lock.json"), current["etag"])
                return
            except PreconditionFailed:
                continue

    def describe(self, holder: dict[str, Any]) -> str:
        return (
            f"index {self.root} is being updated by the run writing {holder.get('output')} (pid {holder.get('pid')} "
            f"on {holder.get('host')}, since {holder.get('started')}, lock renewed {holder.get('age_s', 0):.0f} s "
            f"ago); wait for it, use index_mode: read, or if that run was killed run again once its lock is "
            f"{holder.get('ttl_s', LOCK_TTL_S):.0f} s old (it is then taken over)"
        )


def release_held(url: str, run: dict[str, Any]) -> None:
    """Release ``run``'s lock on the index at ``url`` if this process holds it (a failed run, collected)."""
    held = _HELD.pop(_key(url.rstrip("/"), run), None)
    if held is not None:
        held.release()


@atexit.register
def _release_all() -> None:
    """A process ending (a failed inline run's CLI) releases the locks it still renews, so the next run need not
    wait ``ttl_s`` for a takeover."""
    while _HELD:
        _, lock = _HELD.popitem()
        with contextlib.suppress(Exception):  # best effort at exit: a lock left behind is taken over after ttl_s
            lock.release()


def _key(root: str, run: dict[str, Any]) -> tuple[str, str, str]:
    return join(root, "_lock.json"), str(run.get("fingerprint")), str(run.get("output"))


def _who(run: dict[str, Any]) -> dict[str, Any]:
    """The run a lock is held for; ``driver`` (its ``mdf run`` process) lets its ``--resume`` take over the lock
    of a Ray actor that outlives a killed driver (:func:`mdf.storage.dead_on_this_host`)."""
    who: dict[str, Any] = {"fingerprint": str(run.get("fingerprint")), "output": str(run.get("output"))}
    if isinstance(run.get("driver"), dict):
        who["driver"] = run["driver"]
    return who


def _same_run(holder: dict[str, Any], run: dict[str, Any]) -> bool:
    return holder.get("fingerprint") == str(run.get("fingerprint")) and holder.get("output") == str(run.get("output"))
