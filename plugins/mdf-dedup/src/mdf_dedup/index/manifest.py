"""The index's manifest (what it holds, made how) and its lock (one ``update`` run at a time).

``manifest.json`` lists the generations: immutable folders of per-bucket files, each added by one run. It is
replaced whole (:meth:`IndexFiles.publish`), so a reader sees the index before or after a run's generation,
never half of it, and a run that fails before replacing it leaves no trace but unreferenced files. It also
records how the keys were made (the mdf version, the operator and its key settings): keys made otherwise
would not match, so such an index is refused before any work.

``_lock.json`` is created only if absent (:meth:`IndexFiles.create`) by the first bucket of an ``update`` run
and removed when its generation is published. A run that died leaves it behind: a holder whose process is
gone (same host) is taken over; any other holder is named in the refusal.
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Any

from mdf import __version__
from mdf_dedup.index.files import IndexFiles

MANIFEST = "manifest.json"
LOCK = "_lock.json"
FORMAT = 1


class IndexBusy(Exception):
    """Another run is updating the index; the message names it."""


def read_manifest(files: IndexFiles) -> dict[str, Any] | None:
    raw = files.read(MANIFEST)
    return None if raw is None else json.loads(raw)


def new_manifest(operator: str, settings: dict[str, Any]) -> dict[str, Any]:
    return {"format": FORMAT, "mdf_version": __version__, "operator": operator, "settings": settings,
            "generations": []}  # fmt: skip


def write_manifest(files: IndexFiles, manifest: dict[str, Any]) -> None:
    data = json.dumps(manifest, indent=1).encode()
    files.publish(MANIFEST, lambda f: f.write(data))


def difference(manifest: dict[str, Any], operator: str, settings: dict[str, Any]) -> str | None:
    """What differs between how the index's keys were made and how this operator makes them, or ``None``."""
    if manifest.get("format") != FORMAT:
        return f"index format {manifest.get('format')}, this mdf reads format {FORMAT}"
    if manifest.get("mdf_version") != __version__:
        return f"made by mdf {manifest.get('mdf_version')}, this is mdf {__version__}"
    if manifest.get("operator") != operator:
        return f"made by {manifest.get('operator')}, not {operator}"
    theirs = manifest.get("settings", {})
    for key in sorted(set(theirs) | set(settings)):
        if theirs.get(key) != settings.get(key):
            return f"made with {key}={theirs.get(key)!r}, this operator has {key}={settings.get(key)!r}"
    return None


def gen_files(gen: dict[str, Any], bucket: int) -> tuple[str, str]:
    """The keys file and the sources file of ``bucket`` in generation ``gen``."""
    stem = f"{gen['id']}/b{bucket:04d}-of-{gen['buckets']:04d}"
    return f"{stem}.keys.npy", f"{stem}.sources.parquet"


# -- lock -------------------------------------------------------------------------------------------------------
def holder_alive(holder: dict[str, Any]) -> bool:
    """Whether the process that took the lock may still run (another host: cannot tell, so yes)."""
    if holder.get("host") != socket.gethostname():
        return True
    try:
        pid = int(holder["pid"])
        if pid <= 0:  # a damaged lock: no process to ask (``kill(-1, 0)`` would ask every process)
            return True
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, KeyError, ValueError):
        return True
    return True


def describe(files: IndexFiles, holder: dict[str, Any]) -> str:
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(holder.get("since", 0)))
    return (
        f"index {files.root} is being updated by the run writing {holder.get('output')} (pid {holder.get('pid')} "
        f"on {holder.get('host')}, since {since} UTC); wait for it, use index_mode: read, or remove "
        f"{files.path(LOCK)} if that run is gone"
    )


def read_lock(files: IndexFiles) -> dict[str, Any] | None:
    raw = files.read(LOCK)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:  # a half-written lock from a crash while creating it
        return {"pid": -1, "host": socket.gethostname()}


def acquire(files: IndexFiles, run: dict[str, Any]) -> None:
    """Take the lock for ``run`` (idempotent for the same run); :class:`IndexBusy` when another run holds it."""
    me = {"fingerprint": run.get("fingerprint"), "output": run.get("output"), "pid": os.getpid(),
          "host": socket.gethostname(), "since": time.time()}  # fmt: skip
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


def release(files: IndexFiles, run: dict[str, Any]) -> None:
    holder = read_lock(files)
    if holder is not None and holder.get("fingerprint") == run.get("fingerprint"):
        files.delete(LOCK)
