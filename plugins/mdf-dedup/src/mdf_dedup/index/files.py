"""Every file access of the dedup index, in one place: listing, reading, publishing, conditional create.

The index is immutable files plus two small mutable ones (``manifest.json``, replaced whole; ``_lock.json``,
created only if absent). Those are the only operations it needs, and each has an object-storage counterpart
(list, GET, PUT of a finished object, conditional PUT): :func:`open_files` gives this class for a local folder
and :class:`~mdf_dedup.index.objects.ObjectIndexFiles` for a URL. Here they work on a local folder: publish is
write-then-rename (atomic on POSIX), the manifest's conditional replace and the lock's conditional create are
:mod:`mdf.storage`'s (:class:`~mdf_dedup.index.versioned.VersionedFiles`, the same for both kinds), keys files
are memory-mapped.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from mdf.storage import PreconditionFailed, Storage, create_exclusive, default, is_remote
from mdf_dedup.index.checksums import check_digest, digest, file_digest
from mdf_dedup.index.versioned import VersionedFiles


def index_root(path: str) -> str:
    """How a run names the index (the same in every process): an absolute folder, or the URL as given."""
    return path.rstrip("/") if is_remote(path) else os.path.abspath(path.removeprefix("file://"))


def publish_hashed(files: Any, name: str, write: Callable[[Any], None]) -> tuple[int, str]:
    """:meth:`IndexFiles.publish` (or an object index's), also returning the :func:`digest` of the bytes written:
    an object is written from memory anyway; a local file is read back from the page cache."""
    if files.remote:
        buf = io.BytesIO()
        write(buf)
        data = buf.getvalue()
        return files.publish(name, lambda f: f.write(data)), digest(data)
    size = files.publish(name, write)
    return size, file_digest(files.path(name))


def open_files(path: str, settings: Any = None) -> Any:
    """The index at ``path``: :class:`IndexFiles` for a folder, :class:`ObjectIndexFiles` for a URL (with
    ``settings``, the recipe's ``storage:`` block, where the process has not been configured with it)."""
    if not is_remote(path):
        return IndexFiles(index_root(path))
    from mdf_dedup.index.objects import ObjectIndexFiles

    return ObjectIndexFiles(path, settings)


class IndexFiles(VersionedFiles):
    """The files under one index root (a local folder)."""

    remote = False
    writable = True

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)

    @property
    def storage(self) -> Storage:  # type: ignore[override]
        """The process's storage layer: its conditional operations on local paths keep no state of their own."""
        return default()

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    def exists(self, name: str) -> bool:
        return os.path.exists(self.path(name))

    def size(self, name: str) -> int | None:
        """Bytes of ``name``, or ``None`` when it is missing."""
        try:
            return os.path.getsize(self.path(name))
        except FileNotFoundError:
            return None

    def read(self, name: str) -> bytes | None:
        """The whole file, or ``None`` when it is missing."""
        try:
            with open(self.path(name), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def load_keys(self, name: str, size: int, checksum: str | None = None) -> np.ndarray:
        """A keys file (``.npy``), memory-mapped: pages are read as lookups touch them; with ``checksum``, read once
        first to check it (the lookups' directory reads every key anyway)."""
        self.verify(name, checksum)
        return np.load(self.path(name), mmap_mode="r")

    def open_table(self, name: str, checksum: str | None = None) -> str:
        """What :func:`pyarrow.parquet.read_table` reads ``name`` from, its content checked with ``checksum``."""
        self.verify(name, checksum)
        return self.path(name)

    def verify(self, name: str, checksum: str | None) -> None:
        """:func:`check_digest` of the file ``name`` (nothing read without ``checksum``)."""
        if checksum is not None:
            check_digest(self.path(name), file_digest(self.path(name)), checksum)

    def list(self, prefix: str = "") -> list[str]:
        """Names (relative to the root) of the files under the folder ``prefix``."""
        base = self.path(prefix)
        out = []
        for folder, _, names in os.walk(base):
            out.extend(os.path.relpath(os.path.join(folder, n), self.root) for n in names)
        return sorted(out)

    def publish(self, name: str, write: Callable[[BinaryIO], None]) -> int:
        """Write ``name`` through ``write(file)`` so readers see the old file or the whole new one; return bytes."""
        final = self.path(name)
        os.makedirs(os.path.dirname(final), exist_ok=True)
        tmp = f"{final}.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
        return os.path.getsize(final)

    def create(self, name: str, data: bytes) -> bool:
        """Create ``name`` holding ``data`` only if it does not exist; ``False`` when it did."""
        try:
            create_exclusive(self.storage, self.path(name), data)  # write, then link: appears whole or not at all
        except PreconditionFailed:
            return False
        return True

    def delete(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path(name))
        folder = os.path.dirname(self.path(name))
        if folder != self.root:
            with contextlib.suppress(OSError):  # a generation's folder, once empty
                os.rmdir(folder)
