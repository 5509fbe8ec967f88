"""The compressed units of a WARC file, inflated here one by one: gzip members (``.warc.gz``) and zstd frames
(``.warc.zst``), for FastWARC and the recovery walker to read as a plain WARC.

Why here and not in FastWARC: only then is a record's ``offset`` the start of the unit that holds it (FastWARC's
position is a later unit's when one unit holds several records), and only then does a damaged unit cost that
unit alone. The rules are the Rust kernel's (``rust/src/warc/gz.rs``), so both paths read the same rows:

* **Held until verified.** A unit's inflated bytes are handed on when the unit ends whole (gzip: CRC and size;
  zstd: its checksum when it has one), or once they lie more than :data:`HOLD` bytes behind its inflated end
  (a file written as one unit must not be held whole). A record of a unit that turns out bad is never read.
* **A bad unit ends the stream** with :attr:`Units.error` (its offset and why); its bytes not handed on are
  dropped (a unit cut short by the input's end keeps its whole records: truncation spoils nothing before the
  cut). :func:`next_unit` finds where reading can go on: the next gzip header (or zstd magic) after the bad
  unit's start whose data inflates to ``WARC/1.``.
* A zstd file may start with a dictionary in a skippable frame (the WARC zstd convention, ``.warc.zst``); its
  frames are then inflated with it. Other skippable frames are passed over.

zlib-ng inflates the gzip members (same format and errors as ``zlib``, 1.4-1.7x faster on CommonCrawl members).
"""

from __future__ import annotations

import io
import struct
from typing import Any, BinaryIO

from zlib_ng.zlib_ng import decompressobj as _gzip_inflater
from zlib_ng.zlib_ng import error as _ZlibError

from mdf_text.io.warc_split import _next_member, next_unit_start, open_binary

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
LZ4_MAGIC = b"\x04\x22\x4d\x18"
_ZSTD_DICT = 0x184D2A5D  # the WARC zstd convention's dictionary frame
_WARC_HEAD = b"WARC/1."
HOLD = 1 << 20  # inflated bytes of an open unit held back until it is verified (the kernel's gz::HOLD)
_GZ_READ = 1 << 14
_ZSTD_READ = 1 << 17


def codec_of(head: bytes) -> str:
    """``gzip``, ``zstd``, ``lz4`` or ``plain`` from a file's first bytes (a zstd dictionary frame is zstd)."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC) or _skippable(head):
        return "zstd"
    if head.startswith(LZ4_MAGIC):
        return "lz4"
    return "plain"


def _skippable(head: bytes) -> bool:
    return len(head) >= 4 and head[1:4] == b"\x2a\x4d\x18" and head[0] & 0xF0 == 0x50


def zstd_dictionary(path: str) -> Any:
    """The dictionary a ``.warc.zst`` starts with (``None`` without one), compressed or not."""
    import zstandard

    with open_binary(path) as f:
        head = f.read(8)
        if len(head) < 8 or struct.unpack("<I", head[:4])[0] != _ZSTD_DICT:
            return None
        data = f.read(struct.unpack("<I", head[4:])[0])
    if data.startswith(ZSTD_MAGIC):
        data = zstandard.ZstdDecompressor().decompress(data)
    return zstandard.ZstdCompressionDict(data)


class _Gzip:
    name, what, error_type = "gzip member", "gzip member", _ZlibError

    def __init__(self, dictionary: Any = None) -> None:
        pass

    def starts(self, data: bytes) -> bool:
        return data.startswith(GZIP_MAGIC)

    def inflater(self) -> Any:
        return _gzip_inflater(31)

    def bad(self, at: int, exc: Exception) -> str:
        return f"bad gzip data in the member at byte {at}: {exc}"


class _Zstd:
    name, what = "zstd frame", "zstd frame"

    def __init__(self, dictionary: Any = None) -> None:
        import zstandard

        self._zstd = zstandard.ZstdDecompressor(dict_data=dictionary) if dictionary is not None else None
        self._plain = zstandard.ZstdDecompressor()
        self.error_type = zstandard.ZstdError

    def starts(self, data: bytes) -> bool:
        return data.startswith(ZSTD_MAGIC) or _skippable(data)

    def inflater(self) -> Any:
        return (self._zstd or self._plain).decompressobj()

    def bad(self, at: int, exc: Exception) -> str:
        return f"bad zstd data in the frame at byte {at}: {exc}"


def unit_kind(codec: str, dictionary: Any = None) -> _Gzip | _Zstd:
    return _Gzip() if codec == "gzip" else _Zstd(dictionary)


class Units(io.RawIOBase):
    """A ``.warc.gz`` or ``.warc.zst`` stream inflated here, unit by unit, read forward as a plain WARC.

    ``raw`` is positioned at file offset ``start``, the start of a unit. Each unit's file offset is filed against
    the decoded position where it starts (:meth:`starts`), so a record's decoded ``stream_pos`` maps to the unit
    that holds it; :attr:`error` says why the stream ended early (the stream then ends: the caller goes on at
    :func:`next_unit`).
    """

    def __init__(self, raw: BinaryIO, start: int, kind: _Gzip | _Zstd) -> None:
        super().__init__()
        self._raw, self._fpos, self._kind = raw, start, kind
        self._read_size = _GZ_READ if isinstance(kind, _Gzip) else _ZSTD_READ
        self._pending = b""  # compressed bytes read, not yet inflated
        self._out = b""  # released bytes, handed over from _off on
        self._off = 0
        self._held = bytearray()  # inflated bytes of the open unit, not released yet
        self._released = 0  # decoded bytes released so far
        self._inflater: Any = None
        self._pos: list[int] = []  # decoded position where each unit starts ...
        self._at: list[int] = []  # ... and its file offset
        self.error: tuple[int, str] | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._released - len(self._out) + self._off

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Only where the stream already is (FastWARC asks for its position this way): it reads forward."""
        here = self.tell()
        if (whence, offset) not in ((io.SEEK_SET, here), (io.SEEK_CUR, 0)):
            raise io.UnsupportedOperation("an inflated WARC stream reads forward only")
        return here

    def starts(self) -> tuple[list[int], list[int]]:
        """The decoded position where each unit starts and its file offset, as lists that grow in place while the
        stream is read (``ats[bisect_right(starts, pos) - 1]`` is the unit holding ``pos``)."""
        return self._pos, self._at

    def skip(self, n: int) -> None:
        """Drop the next ``n`` decoded bytes (a restart inside a unit)."""
        while n > 0:
            got = len(self.read(min(n, 1 << 20)) or b"")
            if not got:
                return
            n -= got

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        """Fill ``buffer`` from the released output; one :meth:`_step` per read of compressed input."""
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
        # small reads: at each unit's end the inflater copies the rest of the input as unused_data, and
        # CommonCrawl members are a few KB: 16 KiB measured fastest (1 MiB reads spent more time copying)
        data = self._raw.read(self._read_size)
        self._fpos += len(data)
        return data

    def _step(self) -> bool:
        """Inflate one read of compressed input across every unit it holds (a CommonCrawl member is a few KB: a
        Python round trip per member cost as much as inflating it) and release what is verified; False at the
        end of the stream (``error`` says if it ended early)."""
        if self.error is not None:
            return False
        raw = self._read()
        pending = self._pending + raw if self._pending else raw
        parts: list[bytes] = []
        inflater, kind, held = self._inflater, self._kind, self._held
        decoded = self._released + len(held)
        while pending:
            if inflater is None:  # between units: the next one must start here
                if len(pending) < 4 and raw:
                    break  # a unit's first bytes split across reads: read on
                at = self._fpos - len(pending)
                if not kind.starts(pending):
                    self.error = (at, f"bytes at {at}, after the last {kind.name}, are not a {kind.what}")
                    pending = b""
                    break
                inflater = kind.inflater()
                self._pos.append(decoded)
                self._at.append(at)
            try:
                out = inflater.decompress(pending)
            except kind.error_type as exc:
                self.error = (self._at[-1], kind.bad(self._at[-1], exc))
                pending = b""
                inflater = None
                break
            decoded += len(out)
            if inflater.eof:  # the unit is whole: release it
                if held:
                    held += out
                    parts.append(bytes(held))
                    held.clear()
                elif out:
                    parts.append(out)
                pending, inflater = inflater.unused_data, None
            else:
                held += out
                pending = b""
        if not raw and self.error is None and inflater is not None:  # a cut keeps the unit's whole records
            keep = _last_record(held)
            if keep:
                parts.append(bytes(held[:keep]))
            self.error = (self._at[-1], f"{kind.what} at byte {self._at[-1]} is cut short")
        if self.error is not None:  # the bad unit's bytes not released are dropped
            opened = self._at and self.error[0] == self._at[-1]
            if opened and self._pos[-1] == self._released + sum(map(len, parts)):
                self._pos.pop()  # none of its bytes stay
                self._at.pop()
            held.clear()
            inflater = None
        elif len(held) > HOLD:  # a big unit: release all but its last HOLD bytes
            cut = len(held) - HOLD
            parts.append(bytes(held[:cut]))
            del held[:cut]
        self._pending, self._inflater = pending, inflater
        self._out, self._off = b"".join(parts) if len(parts) != 1 else parts[0], 0
        self._released += len(self._out)
        return bool(self._out) or (bool(raw) and self.error is None)


def _last_record(held: bytearray) -> int:
    """Bytes of ``held`` (a unit cut short by the input's end) before its last ``WARC/1.`` line start: its
    whole records. The record the cut falls in is the unit's damage, and so is one followed by no record start
    (a corrupt end of the deflate data can read on into the trailer and end the same way). The kernel's rule
    (``gz.rs``, ``release_records``)."""
    end = len(held)
    while True:
        k = held.rfind(_WARC_HEAD, 0, end)
        if k <= 0:
            return 0
        if held[k - 1] == 0x0A:
            return k
        end = k


def next_unit(path: str, after: int, stop: int, codec: str, dictionary: Any = None) -> int | None:
    """File offset of the first unit at or after ``after`` (before ``stop``) whose data inflates to
    ``WARC/1.``: where reading goes on after a bad unit; ``None`` when there is none."""
    with open_binary(path) as f:
        if codec == "gzip":
            return _next_member(f, after, stop)  # the rule bytes_per_shard plans cuts by
        kind = _Zstd(dictionary)

        def head(data: bytes) -> bytes | None:
            try:
                return bytes(kind.inflater().decompress(data))
            except kind.error_type:
                return None

        # zstd hands on whole blocks only: read one whole (at most 128 KiB) and its frame header
        return next_unit_start(f, after, stop, ZSTD_MAGIC, head, probe=_ZSTD_READ * 2)
