"""A file named by URL, copied once per machine into mdf's cache: models and tokenizers that operators load.

Model files are memory-mapped or read whole by libraries that take a local path (fastText, the tokenizer
kernel), so a model named by URL (``s3://``, ``https://``, any protocol :mod:`mdf.storage` reads) is copied
first: streamed by ranged requests, written beside its place and renamed, under a file lock, so the processes of
one machine (inline threads, Ray replicas) fetch it once. The copy is named after the URL, size and modification
time: a rewritten object is fetched again.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from pathlib import Path

from mdf.storage.errors import StorageError
from mdf.storage.urls import is_remote

_CHUNK = 1 << 22


class FetchError(StorageError):
    """The URL could not be copied whole (unreadable, or fewer bytes than its listing said)."""


def cache_dir(kind: str = "models") -> Path:
    """``$MDF_CACHE_DIR/<kind>``, else ``~/.cache/mdf/<kind>``."""
    return Path(os.environ.get("MDF_CACHE_DIR") or Path.home() / ".cache" / "mdf") / kind


def local_copy(path: str, kind: str = "models") -> str:
    """``path`` itself when local, else the path of this machine's copy of the URL (fetched on first use).

    :raises FetchError: the URL cannot be read (missing, denied, unreachable) or arrived short; the message names
        the URL, never a secret."""
    if not is_remote(path):
        return path
    from mdf.storage.fs import default  # the S3 layer, imported for URLs only

    storage = default()
    try:
        info = storage.info(path)
    except StorageError as exc:
        raise FetchError(path, f"{exc.message}; check the URL and the credentials") from None
    digest = hashlib.sha256(f"{path}\0{info.size}\0{info.mtime_ns}".encode()).hexdigest()[:16]
    folder = cache_dir(kind)
    target = folder / f"{digest}-{os.path.basename(path.rstrip('/')) or 'model'}"
    if target.is_file() and target.stat().st_size == info.size:
        return str(target)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process of this machine may be fetching it: wait for it
        if not (target.is_file() and target.stat().st_size == info.size):
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            try:
                with storage.open_input(path, size=info.size) as src, open(tmp, "wb") as dst:
                    shutil.copyfileobj(src, dst, _CHUNK)
                if tmp.stat().st_size != info.size:
                    raise FetchError(path, f"fetched {tmp.stat().st_size} of {info.size} bytes")
                os.replace(tmp, target)
            except FetchError:
                raise
            except StorageError as exc:
                raise FetchError(path, exc.message) from None
            finally:
                tmp.unlink(missing_ok=True)
    return str(target)
