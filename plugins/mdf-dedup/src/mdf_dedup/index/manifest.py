"""The index's manifest (what it holds, made how) and its lock (one ``update`` run at a time).

``manifest.json`` lists the generations: immutable folders of per-bucket files, each added by one run. It is
replaced whole (:meth:`IndexFiles.publish`), so a reader sees the index before or after a run's generation,
never half of it, and a run that fails before replacing it leaves no trace but unreferenced files. It also
records how the keys were made (the mdf version, the operator and its key settings): keys made otherwise
would not match, so such an index is refused before any work.

``_lock.json`` is created only if absent (:meth:`IndexFiles.create`) by the first bucket of an ``update`` run
and removed when its generation is published. A run that died leaves it behind: a holder whose process is
gone (same host) is taken over; any other holder is named in the refusal. On object storage the manifest is
replaced only if its ETag is the one the run read, and the lock is an :class:`mdf.storage.S3Lock`
(:mod:`~mdf_dedup.index.objects`); the functions here take either kind of index.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from typing import Any

from mdf import OperatorError, __version__
from mdf.storage import dead_on_this_host
from mdf_dedup.index.errors import Conflict, IndexBusy
from mdf_dedup.index.files import IndexFiles

MANIFEST = "manifest.json"
LOCK = "_lock.json"
FORMAT = 1


def read_manifest(files: IndexFiles) -> dict[str, Any] | None:
    return read_manifest_tagged(files)[0]


def read_manifest_tagged(files: IndexFiles) -> tuple[dict[str, Any] | None, str | None]:
    """The manifest and its version (an object's ETag, a local file's inode and mtime), for :func:`write_manifest`."""
    raw, tag = files.read_tagged(MANIFEST)
    if raw is None:
        return None, None
    try:
        return json.loads(raw), tag
    except ValueError as exc:
        raise OperatorError(f"index manifest {files.path(MANIFEST)} is not valid JSON ({exc}); restore it") from None


def new_manifest(operator: str, settings: dict[str, Any]) -> dict[str, Any]:
    return {"format": FORMAT, "mdf_version": __version__, "operator": operator, "settings": settings,
            "generations": []}  # fmt: skip


def write_manifest(files: IndexFiles, manifest: dict[str, Any], tag: str | None = None) -> None:
    """Replace the manifest only if it is still version ``tag`` (absent if ``None``), locally and on S3 alike."""
    data = json.dumps(manifest, indent=1).encode()
    try:
        files.replace(MANIFEST, data, tag)
    except Conflict:
        raise OperatorError(f"index manifest {files.path(MANIFEST)} was replaced by another run since this run read "
                            "it (this run's lock was taken over); nothing published: run again") from None  # fmt: skip


def difference(manifest: dict[str, Any], operator: str, settings: dict[str, Any]) -> str | None:
    """What differs between how the index's keys were made and how this operator makes them, or ``None``."""
    if manifest.get("format") != FORMAT:
        return f"index format {manifest.get('format')}, this mdf reads format {FORMAT}"
    if manifest.get("mdf_version") != __version__:
        return f"made by mdf {manifest.get('mdf_version')}, this is mdf {__version__}"
    if manifest.get("operator") != operator:
        return f"made by {manifest.get('operator')}, not {operator}"
    theirs = manifest.get("settings", {})
    kinds = theirs.get("index_kind", "exact"), settings.get("index_kind", "exact")
    if kinds[0] != kinds[1]:  # before the settings only one kind has (a bloom index's false_positive_rate)
        return f"made as index_kind: {kinds[0]}, this operator has index_kind: {kinds[1]}"
    for key in sorted(set(theirs) | set(settings)):
        if theirs.get(key) != settings.get(key):
            return f"made with {key}={theirs.get(key)!r}, this operator has {key}={settings.get(key)!r}"
    return None


def strangers(files: IndexFiles) -> list[str]:
    """Files of an index without a manifest that no ``update`` run now starting may leave behind: all but the lock
    and the generation the lock's holder (a run killed before it published: its ``--resume``) wrote. An empty
    list means a new index may start here."""
    holder = read_lock(files)
    own = generation_id(holder) if holder is not None else None
    out = []
    for name in files.list():
        if name == LOCK or (own is not None and name.split("/")[0] == own) or ".tmp-" in name or ".new-" in name:
            continue
        out.append(name)
    return out


def generation_id(run: dict[str, Any]) -> str:
    """The same for every bucket of a run and for its resume; different for another run."""
    return "g-" + hashlib.sha1(f"{run.get('fingerprint')}|{run.get('output')}".encode()).hexdigest()[:16]


def gen_files(gen: dict[str, Any], bucket: int) -> tuple[str, str]:
    """The keys file and the sources file of ``bucket`` in generation ``gen``."""
    stem = f"{gen['id']}/b{bucket:04d}-of-{gen['buckets']:04d}"
    return f"{stem}.keys.npy", f"{stem}.sources.parquet"


# -- lock -------------------------------------------------------------------------------------------------------
def holder_alive(holder: dict[str, Any]) -> bool:
    """Whether the process that took the lock may still run: not when it ran on this host and is gone (a run
    killed with -9: its own ``--resume`` takes the lock over at once, on object storage too,
    :func:`mdf.storage.dead_on_this_host`); else, for an object lock, renewed within its ttl; another host's
    local lock: cannot tell, so yes."""
    if dead_on_this_host(holder):
        return False
    return bool(holder.get("alive", True))


def describe(files: IndexFiles, holder: dict[str, Any]) -> str:
    if files.remote:
        return files.describe(holder)
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(holder.get("since", 0)))
    return (
        f"index {files.root} is being updated by the run writing {holder.get('output')} (pid {holder.get('pid')} "
        f"on {holder.get('host')}, since {since} UTC); wait for it, use index_mode: read, or remove "
        f"{files.path(LOCK)} if that run is gone"
    )


def read_lock(files: IndexFiles) -> dict[str, Any] | None:
    """The holder of the lock (``None``: unlocked); on object storage with ``alive``, ``age_s`` and ``ttl_s``."""
    if files.remote:
        return files.lock_holder()
    raw = files.read(LOCK)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:  # a half-written lock from a crash while creating it
        return {"pid": -1, "host": socket.gethostname()}


def acquire(files: IndexFiles, run: dict[str, Any]) -> None:
    """Take the lock for ``run`` (idempotent for the same run); :class:`IndexBusy` when another run holds it."""
    if files.remote:
        files.acquire_lock(run)
        return
    me = {"fingerprint": run.get("fingerprint"), "output": run.get("output"), "pid": os.getpid(),
          "host": socket.gethostname(), "since": time.time(), "driver": run.get("driver")}  # fmt: skip
    for _ in range(3):
        if files.create(LOCK, json.dumps(me).encode()):
            return
        holder = read_lock(files)
        if holder is None:
            continue  # released meanwhile: try again
        if holder.get("fingerprint") == run.get("fingerprint") and holder.get("output") == run.get("output"):
            return  # this run (another bucket of it, or its resume)
        if holder_alive(holder):
            raise IndexBusy(describe(files, holder))
        files.delete(LOCK)  # its process is gone: take it over
    raise IndexBusy(f"index {files.root}: could not take {files.path(LOCK)}; retry")


def check(files: IndexFiles, run: dict[str, Any]) -> None:
    """Before publishing: ``run`` still holds the lock (an object lock can be taken over when not renewed)."""
    if files.remote:
        files.check_lock(run)


def release(files: IndexFiles, run: dict[str, Any]) -> None:
    if files.remote:
        files.release_lock(run)
        return
    holder = read_lock(files)
    if holder is not None and holder.get("fingerprint") == run.get("fingerprint"):
        files.delete(LOCK)
