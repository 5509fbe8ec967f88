"""Every file access of the dedup index, in one place: listing, reading, publishing, conditional create.

The index is immutable files plus two small mutable ones (``manifest.json``, replaced whole; ``_lock.json``,
created only if absent). Those are the only operations it needs, and each has an object-storage counterpart
(list, GET, PUT of a finished object, PUT with ``If-None-Match: *``), so moving the index to S3 replaces this
module and nothing else. Here they work on a local folder: publish is write-then-rename (atomic on POSIX), the
conditional create is ``O_CREAT | O_EXCL``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import BinaryIO


class IndexFiles:
    """The files under one index root (a local folder)."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)

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

    def local(self, name: str) -> str:
        """A local path to read ``name`` from (memory-mapping needs one; object storage would download it)."""
        return self.path(name)

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
        os.makedirs(self.root, exist_ok=True)
        try:
            fd = os.open(self.path(name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return True

    def delete(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path(name))
        folder = os.path.dirname(self.path(name))
        if folder != self.root:
            with contextlib.suppress(OSError):  # a generation's folder, once empty
                os.rmdir(folder)
