"""Check that the end of a WARC file (or shard) is whole: every byte after the last record FastWARC yielded
belongs to a complete record.

Why: FastWARC stops *silently* at a gzip member cut short or a record header cut short, and never reads the
body of a record it is told to skip, so a file cut inside a request, a metadata record or a response that the
``mime_types`` filter drops read as complete. In the middle of a file it does complain (a bad header or bad
gzip data raises), so only the tail needs checking: the reader hands over where the last record it saw starts
(the record itself in a plain ``.warc``, its gzip member in a ``.warc.gz``) and this walks from there to the
end with the WARC framing rules -- ``WARC/`` version line, header block ended by a blank line, a
``Content-Length`` body, blank lines -- inflating gzip members one after another. That is usually one member,
so it costs a few kilobytes of reading per file.

It is as lenient as FastWARC about the blank lines between records (any run of CR/LF), so a file FastWARC
reads whole is never reported; everything else that is not a complete record is damage.
"""

from __future__ import annotations

import bisect
import io
import re
from typing import Any, BinaryIO

import pyarrow as pa
from zlib_ng.zlib_ng import decompressobj as _decompressobj
from zlib_ng.zlib_ng import error as _ZlibError

from mdf_text.io.warc_split import is_gzip, open_binary

_GZIP_MAGIC = b"\x1f\x8b"
_LZ4_MAGIC = b"\x04\x22\x4d\x18"
_CHUNK = 1 << 20
_GZ_READ = 1 << 14
_MAX_HEADER = 1 << 20  # a WARC header block larger than this is not one
MAX_BATCH_BYTES = 256 << 20  # a batch's body column stays far below binary()'s 2 GiB offsets
FIRST_BODY_BYTES = 16 << 20  # the first batch's body buffer; it grows as needed
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)[ \t]*\r\n", re.IGNORECASE)


def check_tail(path: str, start: int, stop: int) -> tuple[int, str] | None:
    """``None`` if bytes ``[start, stop)`` of ``path`` are whole WARC records (or gzip members of them), else
    ``(offset, message)``: where the damaged record (or its gzip member) starts and what is wrong."""
    if start >= stop:
        return None
    with open_binary(path) as f:
        if f.read(4) == _LZ4_MAGIC:  # FastWARC's other codec: not checked here (no lz4 in the dependencies)
            return None
        f.seek(start)
        return _Tail(f, start, stop, is_gzip(path)).check()


class _Tail:
    """Decoded bytes of ``[start, stop)``, read forward in chunks, with the file offset each record came from."""

    def __init__(self, f: BinaryIO, start: int, stop: int, gz: bool) -> None:
        self.f, self.start, self.stop, self.gz = f, start, stop, gz
        self.fpos = start  # next file byte to read
        self.buf = bytearray()
        self.i = 0  # read position in buf
        self.decoded = 0  # decoded bytes dropped from the front of buf
        self.raw = b""  # compressed bytes read, not yet inflated
        self.inflater: Any = None  # the member being inflated
        self.member_pos: list[int] = []  # decoded position where each member starts ...
        self.member_at: list[int] = []  # ... and its file offset
        self.error: str | None = None  # why the decoded stream ended early (bad or cut gzip data)

    def check(self) -> tuple[int, str] | None:
        while True:
            while self._need(1) and self.buf[self.i] in b"\r\n":
                self.i += 1
            if not self._need(1):
                return None if self.error is None else (self._where(), self.error)
            at = self._where()
            if not self._need(5) or self.buf[self.i : self.i + 5] != b"WARC/":
                found = bytes(self.buf[self.i : self.i + 16])
                return at, self.error or f"no WARC record at byte {at}: found {found!r}"
            end = self._find(b"\r\n\r\n")
            if end < 0:
                return at, self.error or f"truncated WARC header at byte {at} (no end of the header block)"
            match = _CONTENT_LENGTH.search(self.buf, self.i, end + 2)
            if match is None:
                return at, f"WARC record at byte {at} has no Content-Length"
            length = int(match.group(1))
            self.i = end + 4
            got = self._skip(length)
            if got < length:
                return at, self.error or f"truncated WARC record at byte {at}: {got} of {length} bytes"

    def _where(self) -> int:
        """File offset of the record at the read position: its own offset, or its gzip member's."""
        pos = self.decoded + self.i
        if not self.gz:
            return self.start + pos
        k = bisect.bisect_right(self.member_pos, pos) - 1
        return self.member_at[k] if k >= 0 else self.start

    def _need(self, n: int) -> bool:
        while len(self.buf) - self.i < n:
            if not self._more():
                return False
        return True

    def _find(self, sub: bytes) -> int:
        """Index in buf of ``sub`` at or after the read position, reading on for up to a header's size."""
        searched = self.i
        while True:
            k = self.buf.find(sub, searched)
            if k >= 0:
                return k
            searched = max(self.i, len(self.buf) - len(sub) + 1)
            if len(self.buf) - self.i > _MAX_HEADER or not self._more():
                return -1

    def _skip(self, n: int) -> int:
        done = 0
        while done < n:
            if self.i >= len(self.buf) and not self._more():
                break
            step = min(n - done, len(self.buf) - self.i)
            self.i += step
            done += step
        return done

    def _more(self) -> bool:
        """Append the next chunk of decoded bytes to buf; False at the end (``error`` says if it was early)."""
        if self.i > _CHUNK:  # drop what was read
            del self.buf[: self.i]
            self.decoded += self.i
            self.i = 0
        if not self.gz:
            data = self._read()
            self.buf += data
            return bool(data)
        return self._inflate()

    def _read(self) -> bytes:
        data = self.f.read(min(_CHUNK, self.stop - self.fpos))
        self.fpos += len(data)
        return data

    def _member(self, at: int) -> None:
        self.member_pos.append(self.decoded + len(self.buf))
        self.member_at.append(at)

    def _inflate(self) -> bool:
        if self.error is not None:
            return False
        if self.inflater is None:  # between members: the next must start here
            if len(self.raw) < 3:
                self.raw += self._read()
            if not self.raw:
                return False
            at = self.fpos - len(self.raw)
            if not self.raw.startswith(_GZIP_MAGIC):
                self.error = f"bytes after the last gzip member at byte {at} are not a gzip member"
                self._member(at)
                return False
            self.inflater = _decompressobj(31)
            self._member(at)
        if not self.raw:
            self.raw = self._read()
            if not self.raw:
                self.error = f"gzip member at byte {self.member_at[-1]} is cut short"
                return False
        try:
            self.buf += self.inflater.decompress(self.raw)
        except _ZlibError as exc:
            self.error = f"bad gzip data in the member at byte {self.member_at[-1]}: {exc}"
            return False
        self.raw = self.inflater.unused_data if self.inflater.eof else b""
        if self.inflater.eof:
            self.inflater = None
        return True


class Members(io.RawIOBase):
    """A ``.warc.gz`` stream inflated here, member by member, for FastWARC to read as a plain WARC.

    Why not let FastWARC inflate: its ``stream_pos`` is not the member holding a record when one member holds
    several (it gives a later member's offset), and it stops quietly at a member cut short. Here each member's
    file offset is filed against the decoded position where it starts, so :meth:`member_of` maps a record's
    (decoded) ``stream_pos`` to the member that holds it, and :attr:`error` says why the stream ended early.
    zlib-ng does the inflating (same format and errors as ``zlib``, 1.4-1.7x faster on these members).
    """

    def __init__(self, raw: BinaryIO, start: int) -> None:
        super().__init__()
        self._raw, self._fpos = raw, start  # file offset of the next byte read from raw
        self._pending = b""  # compressed bytes read, not yet inflated
        self._out = b""  # decoded bytes, handed over from _off on
        self._off = 0
        self._decoded = 0  # decoded bytes produced so far
        self._inflater: Any = None
        self._pos: list[int] = []  # decoded position where each member starts ...
        self._at: list[int] = []  # ... and its file offset
        self.error: tuple[int, str] | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._decoded - len(self._out) + self._off

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Only where the stream already is (FastWARC asks for its position this way): it reads forward."""
        here = self.tell()
        if (whence, offset) not in ((io.SEEK_SET, here), (io.SEEK_CUR, 0)):
            raise io.UnsupportedOperation("an inflated .warc.gz stream reads forward only")
        return here

    def starts(self) -> tuple[list[int], list[int]]:
        """The decoded position where each member starts and its file offset, as lists that grow in place
        while the stream is read (``ats[bisect_right(starts, pos) - 1]`` is :meth:`member_of` inlined)."""
        return self._pos, self._at

    def member_of(self, decoded: int) -> int:
        """File offset of the gzip member holding decoded position ``decoded``."""
        return self._at[bisect.bisect_right(self._pos, decoded) - 1]

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        """Fill ``buffer`` from the inflated output; one :meth:`_step` per read of compressed input."""
        n, size = 0, len(buffer)
        while n < size:
            if self._off >= len(self._out) and not self._step():
                break
            k = min(size - n, len(self._out) - self._off)
            buffer[n : n + k] = memoryview(self._out)[self._off : self._off + k]
            self._off += k
            n += k
        return n

    def _read(self) -> bytes:
        # small reads: at each member's end zlib copies the rest of the input as unused_data, and CommonCrawl
        # members are a few KB: 16 KiB measured fastest (1 MiB reads spent more time copying than inflating)
        data = self._raw.read(_GZ_READ)
        self._fpos += len(data)
        return data

    def _step(self) -> bool:
        """Inflate one read of compressed input into ``_out``, across every member it holds (a CommonCrawl
        member is a few KB, a demo one under 1 KB: a Python round trip per member cost as much as inflating
        it); False at the end of the stream (``error`` says if it ended early)."""
        if self.error is not None:
            return False
        raw = self._read()
        pending = self._pending + raw if self._pending else raw
        parts: list[bytes] = []
        inflater, decoded = self._inflater, self._decoded
        while pending:
            if inflater is None:  # between members: the next one must start here
                if len(pending) < len(_GZIP_MAGIC) and raw:
                    break  # a member's first bytes split across reads: read on
                at = self._fpos - len(pending)
                if not pending.startswith(_GZIP_MAGIC):
                    self.error = (at, f"bytes at {at}, after the last gzip member, are not a gzip member")
                    pending = b""
                    break
                inflater = _decompressobj(31)
                self._pos.append(decoded)
                self._at.append(at)
            try:
                out = inflater.decompress(pending)
            except _ZlibError as exc:
                self.error = (self._at[-1], f"bad gzip data in the member at byte {self._at[-1]}: {exc}")
                pending = b""
                break
            decoded += len(out)
            parts.append(out)
            if inflater.eof:
                pending, inflater = inflater.unused_data, None
            else:
                pending = b""
        self._pending, self._inflater, self._decoded = pending, inflater, decoded
        if not raw and self.error is None and inflater is not None:
            self.error = (self._at[-1], f"gzip member at byte {self._at[-1]} is cut short")
        self._out, self._off = b"".join(parts) if len(parts) != 1 else parts[0], 0
        return bool(self._out) or (bool(raw) and self.error is None)


class BodyColumn:
    """The ``body`` column, written straight into one Arrow buffer per batch as records arrive.

    Each payload is copied once, into the batch's buffer, and its ``bytes`` object is freed at once, so the
    allocator hands the same warm memory to the next read. Keeping a batch's ``bytes`` objects alive and building
    the column with ``pa.array`` costs a second copy plus a batch's worth of fresh pages: measured 20-30 % of the
    reader's time on CommonCrawl records.

    The buffer starts at the previous batch's size plus a quarter (16 MiB for the first) and doubles when a
    batch outgrows it, up to 256 MiB a batch. Why not reserve 256 MiB and shrink: Arrow's allocator (mimalloc)
    shrinks in place only down to half a block, so shrinking a 256 MiB reservation to a 34 MiB batch copied
    the whole column again (~9 % of the reader's time on a plain CommonCrawl file).
    """

    def __init__(self, limit: int = MAX_BATCH_BYTES) -> None:
        self._next, self._max = FIRST_BODY_BYTES, limit
        self._reset()

    def _reset(self) -> None:
        self._buffer: Any = None
        self._view: memoryview | None = None
        self._capacity = self._limit = self._pos = 0
        self._ends = [0]

    def fits(self, size: int) -> bool:
        """Whether ``size`` more bytes fit the current batch (always, for the first body of a batch)."""
        return self._buffer is None or self._pos + size <= self._limit

    def append(self, body: bytes) -> None:
        end = self._pos + len(body)
        if self._view is None:
            self._limit = max(self._max, len(body))
            self._capacity = max(min(self._next, self._limit), len(body))
            self._buffer = pa.allocate_buffer(self._capacity, resizable=True)
            self._view = memoryview(self._buffer).cast("B")
        elif end > self._capacity:  # grow: a copy of what the batch holds, then room for as much again
            self._view.release()
            self._capacity = max(end, min(2 * self._capacity, self._limit))
            self._buffer.resize(self._capacity)
            self._view = memoryview(self._buffer).cast("B")
        self._view[self._pos : end] = body
        self._pos = end
        self._ends.append(end)

    def array(self, rows: int) -> pa.Array:
        """The column of the ``rows`` bodies appended since the last call; starts a new buffer."""
        if self._view is None:
            return pa.array([], pa.binary())
        self._view.release()
        self._buffer.resize(self._pos, shrink_to_fit=True)
        offsets = pa.array(self._ends, pa.int32()).buffers()[1]
        out = pa.Array.from_buffers(pa.binary(), rows, [None, offsets, self._buffer])
        self._next = max(FIRST_BODY_BYTES, self._pos + self._pos // 4)
        self._reset()
        return out
