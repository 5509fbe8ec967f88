"""The manifest's versioned read and conditional replace, one implementation for a local index and an object one.

Both are :mod:`mdf.storage`'s conditional operations; a condition that no longer holds (another run replaced the
manifest since this one read it) is :class:`~mdf_dedup.index.errors.Conflict`. A module of its own: the local
files (:mod:`~mdf_dedup.index.files`) and the objects (:mod:`~mdf_dedup.index.objects`) both build on it, and
``files`` picks ``objects`` for a URL.
"""

from __future__ import annotations

from mdf.storage import PreconditionFailed, Storage, create_exclusive, read_versioned, write_if
from mdf_dedup.index.errors import Conflict


class VersionedFiles:
    """What the manifest needs, the same on a folder and on ``s3://``: read with a version, replace only that
    version (:mod:`mdf.storage`'s conditional operations: a local file's inode and mtime, an object's ETag)."""

    storage: Storage
    writable: bool

    def path(self, name: str) -> str:
        raise NotImplementedError

    def read(self, name: str) -> bytes | None:
        raise NotImplementedError

    def read_tagged(self, name: str) -> tuple[bytes | None, str | None]:
        """The file and its version (``None``, ``None`` when missing); a read-only URL: no version."""
        if not self.writable:
            return self.read(name), None
        got = read_versioned(self.storage, self.path(name))
        return (None, None) if got is None else (got.data, got.version)

    def replace(self, name: str, data: bytes, tag: str | None = None) -> None:
        """Write ``name`` if it is still version ``tag`` (absent when ``tag`` is ``None``); :class:`Conflict` if not."""
        try:
            if tag:
                write_if(self.storage, self.path(name), data, tag)
            else:
                create_exclusive(self.storage, self.path(name), data)
        except PreconditionFailed:
            raise Conflict(self.path(name)) from None
