"""Cut a big WARC file into byte ranges that start on record boundaries, and read one range as a stream.

A WARC file has no index, so a cut point is found by searching forward from the nominal offset for the next
record start and *proving* it is one:

* ``.warc.gz`` (one gzip member per record, or a few records per member, as every crawler writes): a candidate
  is a gzip header (``1f 8b 08``) whose member inflates to ``WARC/1.``. A member that starts mid-record (a writer
  that flushes by size) does not inflate to a WARC header, so it is never taken for a boundary.
* uncompressed ``.warc``: a candidate is ``WARC/1.`` at the start of a line whose header block has a
  ``Content-Length`` that lands exactly on the ``\\r\\n\\r\\n`` record end followed by another ``WARC/`` or the
  end of the file. A page *about* WARC that quotes a record in its body would also need a Content-Length that
  chains to a real record to fool this, which is what makes the check safe on crawls of arbitrary pages.

Planning reads a few kilobytes per cut (seek + read), never the whole file, so it stays cheap on the driver.
A file compressed as one gzip member (``gzip file.warc``) has no inner boundary and stays one shard.

Every open goes through :func:`open_binary`, so a URL (``s3://``, ``https://``) is read the same way: streamed
by ranged requests of the storage layer, small blocks for these probes, never downloaded whole.
"""

from __future__ import annotations

import io
import os
import re
import zlib
from collections.abc import Callable
from typing import BinaryIO

from mdf.storage import default, is_remote

_GZIP_MAGIC = b"\x1f\x8b\x08"
_WARC_MAGIC = b"WARC/1."
_SCAN = 1 << 20  # bytes searched per read while looking for the next boundary
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)[ \t]*\r\n", re.IGNORECASE)


PROBE_BLOCK = 1 << 16  # bytes per ranged request when probing a remote file (magic bytes, a cut, a tail)


def open_binary(path: str, size: int | None = None, block: int = PROBE_BLOCK) -> BinaryIO:
    """A local file, or a remote object streamed by ranged requests of ``block`` bytes (``size``: known size,
    saves a HEAD request)."""
    if is_remote(path):
        return default().open_input(path, block_size=block, size=size)  # type: ignore[return-value]
    return open(path, "rb")


def is_gzip(path: str) -> bool:
    with open_binary(path) as f:
        return f.read(3) == _GZIP_MAGIC


def cut_points(path: str, size: int, step: int) -> list[int]:
    """Record-start offsets ``[0, c1, c2, ...]`` about ``step`` bytes apart (always starts with 0)."""
    gz = is_gzip(path)
    if not gz:
        with open_binary(path, size) as f:
            head = f.read(len(_WARC_MAGIC))
        if head != _WARC_MAGIC:  # zstd, lz4, bzip2... or not a WARC file: one shard, the reader says which
            return [0]
    cuts = [0]
    with open_binary(path, size) as f:
        for nominal in range(step, size, step):
            if nominal <= cuts[-1]:
                continue
            found = _next_member(f, nominal, size) if gz else _next_record(f, nominal, size)
            if found is None:
                break
            if found > cuts[-1]:
                cuts.append(found)
    return cuts


def _candidates(f: BinaryIO, start: int, size: int, magic: bytes, line_start: bool) -> list[int]:
    """Offsets >= start of ``magic`` (at a line start if asked) in the first 1 MiB window that has any."""
    out: list[int] = []
    pos = start
    while pos < size:
        f.seek(max(pos - 1, 0))
        chunk = f.read(_SCAN + len(magic) + 1)
        base = max(pos - 1, 0)
        i = pos - base
        while True:
            i = chunk.find(magic, i)
            if i < 0:
                break
            at = base + i
            if at >= pos and (not line_start or at == 0 or chunk[i - 1 : i] == b"\n"):
                out.append(at)
            i += 1
        if out:
            return out
        pos += _SCAN
    return out


def _next_member(f: io.BufferedReader, start: int, size: int) -> int | None:
    def head(data: bytes) -> bytes | None:
        try:
            return zlib.decompressobj(31).decompress(data, len(_WARC_MAGIC))
        except zlib.error:
            return None

    return next_unit_start(f, start, size, _GZIP_MAGIC, head)


def next_unit_start(
    f: BinaryIO, start: int, size: int, magic: bytes, head: Callable[[bytes], bytes | None], probe: int = 1 << 16
) -> int | None:
    """Offset of the first ``magic`` at or after ``start`` (before ``size``) whose compressed unit inflates to
    ``WARC/1.`` (``head(data)``: the first bytes the unit starting ``data`` inflates to, ``None`` when it is
    not one; ``probe`` bytes are enough to inflate a unit's first bytes): a unit that starts a record, not a match
    inside compressed bytes."""
    pos = start
    while pos < size:
        cands = _candidates(f, pos, size, magic, line_start=False)
        if not cands:
            return None
        for at in cands:
            f.seek(at)
            got = head(f.read(min(probe, size - at)))
            if got is not None and got.startswith(_WARC_MAGIC):
                return at
        pos = cands[-1] + 1
    return None


def _next_record(f: io.BufferedReader, start: int, size: int) -> int | None:
    pos = start
    while pos < size:
        cands = _candidates(f, pos, size, _WARC_MAGIC, line_start=True)
        if not cands:
            return None
        for at in cands:
            if _chains(f, at, size):
                return at
        pos = cands[-1] + 1
    return None


def _chains(f: io.BufferedReader, at: int, size: int) -> bool:
    """True if a WARC header at ``at`` declares a length that ends exactly at the next record or the file end."""
    f.seek(at)
    head = f.read(1 << 16)
    end = head.find(b"\r\n\r\n")
    match = _CONTENT_LENGTH.search(head, 0, end + 2) if end > 0 else None
    if match is None:
        return False
    tail = at + end + 4 + int(match.group(1))
    if tail + 4 > size:
        return False
    f.seek(tail)
    after = f.read(4 + len(_WARC_MAGIC))
    return after[:4] == b"\r\n\r\n" and (tail + 4 == size or after[4:] == _WARC_MAGIC)


class Window(io.RawIOBase):
    """A seekable view of bytes ``[start, stop)`` of a file, so FastWARC reads one shard as a whole stream.

    Positions are relative to ``start`` (FastWARC's ``stream_pos`` then is too). FastWARC reads it in
    ``buffer_size`` chunks, so the Python call per read is noise next to the work per chunk.
    """

    def __init__(self, path: str, start: int, stop: int, size: int | None = None, block: int = PROBE_BLOCK) -> None:
        super().__init__()
        self._f = open_binary(path, size, block)
        self._start, self._stop = start, stop
        self._f.seek(start)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._f.tell() - self._start

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: self._start, os.SEEK_CUR: self._f.tell(), os.SEEK_END: self._stop}[whence]
        self._f.seek(min(max(base + offset, self._start), self._stop))
        return self.tell()

    def read(self, size: int | None = -1) -> bytes:
        left = self._stop - self._f.tell()
        if size is None or size < 0 or size > left:
            size = left
        return self._f.read(size)

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._f.close()
        super().close()
