"""The Python reader's recovery walker: where FastWARC stops (a parse error, a record it cannot frame, the end of
its stream), this reads on with the WARC framing rules of the Rust kernel (``rust/src/warc/record.rs``), word
for word, and says what happened and where FastWARC can go on.

Why: FastWARC stops *for good* at the first thing it cannot parse (a record without ``Content-Length``, a header
over 32 KiB, bytes that are no record), and *quietly* at a gzip member or a header cut short; it never reads the
bodies of records it skips. The walker starts at the last record FastWARC read (or the one it stopped at), goes
through the bytes after it, and returns at the first event:

* damage (bytes that are no record, a record without ``Content-Length``, a header with no end, a record cut by
  the input's end, a bad gzip member or zstd frame): one ``(offset, message)`` each; it goes on at the next
  ``WARC/1.x`` line at a line start, or at the next good unit (:func:`mdf_text.io.warc_units.next_unit`);
* a record whose framing is whole but that cannot be read by FastWARC (a WARC header over 32 KiB, or a block
  over ``max_record_bytes``): one rejected row, and it goes on after the record's block, which it streams past;
* the end of the shard with every byte whole: nothing.

So a damaged file costs its damaged parts, and the FastWARC path reads the rows and damage of the kernel path.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from mdf_text.io import warc_fields as wf
from mdf_text.io.warc_split import Window
from mdf_text.io.warc_units import Units, next_unit

_CHUNK = 1 << 20
_BLOCK = 1 << 20  # ranged-request size of a remote file read here


@dataclass(frozen=True)
class Segment:
    """Where reading (re)starts: file offset ``at`` (a unit's start, or any record start of a plain file), and the
    decoded bytes of that unit to drop first (a record after the first of its unit)."""

    at: int
    skip: int = 0


@dataclass
class Frame:
    """What the reader knows across restarts, as the kernel's scanner keeps it: the file offset of the last record
    framed and its ``member_index``, and (plain files) where the record after it should start."""

    last: int | None = None
    index: int = 0
    last_end: int = 0


@dataclass
class Finding:
    damages: list[tuple[int, str]] = field(default_factory=list)
    reject: dict[str, Any] | None = None
    first_whole: bool = True  # the record the walk started at (one FastWARC read) was whole
    resume: Segment | None = None  # where FastWARC goes on; None: the shard's end


@dataclass(frozen=True)
class Rules:
    path: str
    size: int
    base: int  # the shard's start
    stop: int  # the shard's end
    codec: str
    kind: Any  # warc_units unit kind, None for a plain file
    dictionary: Any
    wanted: int
    exact: frozenset[str] | None
    prefixes: tuple[str, ...]
    cap: int  # max_record_bytes

    def mime_ok(self, ctype: str | None) -> bool:
        if self.exact is None:
            return True
        mime = ctype.split(";", 1)[0].strip().lower() if ctype is not None else ""
        return bool(mime) and (mime in self.exact or mime.startswith(self.prefixes))


class _End(Exception):
    """The bytes ran out: at the input's end, or at a bad unit (``cut``)."""


class Walker:
    """One walk from decoded position ``begin`` of the segment ``seg`` (FastWARC's coordinates)."""

    def __init__(self, rules: Rules, frame: Frame, seg: Segment, begin: int) -> None:
        self.r, self.frame = rules, frame
        self.units: Units | None = None
        if rules.kind is None:
            self.raw = Window(rules.path, seg.at + begin, rules.stop, rules.size, _BLOCK)
            self.origin = seg.at
        else:
            self.raw = Window(rules.path, seg.at, rules.stop, rules.size, _BLOCK)
            self.units = Units(self.raw, seg.at, rules.kind)
            self.units.skip(begin)
            self.origin = seg.at
        self.buf = bytearray()
        self.i = 0
        self.bstart = begin  # decoded position of buf[0]
        self.at_end = False

    def close(self) -> None:
        self.raw.close()

    # -- bytes --------------------------------------------------------------------------------------------------
    def _more(self) -> bool:
        """Append the next chunk of decoded bytes (indices into ``buf`` stay valid: see :meth:`_compact`)."""
        if self.at_end:
            return False
        data = (self.units or self.raw).read(_CHUNK)
        if not data:
            self.at_end = True
            return False
        self.buf += data
        return True

    def _compact(self) -> None:
        """Drop what was read (only where no index into ``buf`` is held)."""
        if self.i > _CHUNK:
            del self.buf[: self.i]
            self.bstart += self.i
            self.i = 0

    def _have(self, n: int) -> bool:
        while len(self.buf) - self.i < n:
            if not self._more():
                return False
        return True

    def _find(self, sub: bytes, frm: int, most: int) -> int:
        """Index of ``sub`` at or after ``frm`` and before ``i + most``, reading on as needed; -1 if none."""
        searched = frm
        while True:
            k = self.buf.find(sub, searched, self.i + most)
            if k >= 0:
                return k
            searched = max(frm, len(self.buf) - len(sub) + 1)
            if len(self.buf) - self.i >= most or not self._more():
                return -1

    def offset(self, k: int) -> int:
        """File offset of the record at buffer index ``k``: its own (plain), or its unit's."""
        pos = self.bstart + k
        if self.units is None:
            return self.origin + pos
        starts, ats = self.units.starts()
        j = bisect_right(starts, pos) - 1
        return ats[j] if j >= 0 else self.origin

    def segment(self, k: int) -> Segment:
        """Where FastWARC goes on to read from buffer index ``k``."""
        pos = self.bstart + k
        if self.units is None:
            return Segment(self.origin + pos)
        starts, ats = self.units.starts()
        j = bisect_right(starts, pos) - 1
        return Segment(ats[j], pos - starts[j]) if j >= 0 else Segment(self.origin, pos)

    def cut(self) -> tuple[int, str] | None:
        return self.units.error if self.units is not None else None

    # -- the walk -----------------------------------------------------------------------------------------------
    def walk(self, first: bool, failed: str) -> Finding:
        """Walk from the start: ``first``: the record there is one FastWARC read (framed again, never a row
        again); ``failed``: FastWARC's words, for bytes it could not read that these rules read as a record."""
        f = Finding()
        self.first = first
        try:
            self._walk(f, failed)
        except _End:
            if self.first:
                f.first_whole = False  # FastWARC's record ran into the end: its pending row is dropped
            cut = self.cut()
            if cut is not None:  # a record running into a bad unit is that unit's damage
                f.damages.append(cut)
                nxt = next_unit(self.r.path, cut[0] + 1, self.r.stop, self.r.codec, self.r.dictionary)
                f.resume = Segment(nxt) if nxt is not None else None
            else:
                f.resume = None
        return f

    def _walk(self, f: Finding, failed: str) -> None:
        while True:
            self._compact()
            if not self._have(1):
                raise _End
            nl = self._find(b"\n", self.i, wf.MAX_HEADER + 1)
            end = nl + 1 if nl >= 0 else len(self.buf)
            line = bytes(self.buf[self.i : end])
            if not line.strip(b" \t\n\x0c\r"):
                self.i = end
                continue
            if nl < 0 and self.cut() is not None:
                self.i = end
                raise _End  # the start of a line the bad unit's damage covers
            if not wf.is_version_line(line):
                self._unreadable(f, "Invalid WARC header")
                return self._resync(f, self.i + 1)
            if self._record(f, len(line), failed):
                return

    def _unreadable(self, f: Finding, why: str) -> None:
        fr = self.frame
        plain_at = self.r.base if fr.last is None else fr.last_end  # the end of the last record
        at = self.offset(self.i) if self.units is not None else plain_at
        after = "None" if fr.last is None else str(fr.last)
        f.damages.append((at, f"unreadable WARC data at byte {at} (after the record at byte {after}): {why}"))

    def _resync(self, f: Finding, frm: int) -> None:
        """Go on at the next ``WARC/1.x`` line at a line start, from buffer index ``frm``."""
        k = frm
        while True:
            c = self.buf.find(b"WARC/", k)
            if c < 0:  # none in the buffer: keep its last 4 bytes and the one before them, read on
                k = max(k, len(self.buf) - 4)
                self.i = max(self.i, k - 1)
                before = self.bstart
                self._compact()
                k -= self.bstart - before
                if not self._more():
                    self.i = len(self.buf)
                    raise _End
                continue
            line_start = self.buf[c - 1] == 0x0A if c > 0 else self.bstart == 0
            nl = self.buf.find(b"\n", c)
            while nl < 0 and len(self.buf) - c <= wf.MAX_HEADER and self._more():
                nl = self.buf.find(b"\n", c)
            if line_start and nl >= 0 and wf.is_version_line(bytes(self.buf[c : nl + 1])):
                self.i = c
                if self.units is None:
                    self.frame.last_end = self.offset(c)
                f.resume = self.segment(c)
                return
            k = c + 1

    def _record(self, f: Finding, first_line: int, failed: str) -> bool:
        """The record at ``i``; True when the walk is over (an event, with ``f.resume`` set)."""
        r, fr = self.r, self.frame
        at = self.i
        limit = max(r.cap, wf.MAX_HEADER)
        hend = self._find(b"\r\n\r\n", at, limit + 4)
        if hend < 0:
            offset = self.offset(at)
            if len(self.buf) - at > limit:
                f.damages.append((offset, f"WARC header at byte {offset} has no end within {limit} bytes"))
                self._resync(f, at + first_line)
                return True
            if self.cut() is None:
                f.damages.append((offset, f"truncated WARC header at byte {offset} (no end of the header block)"))
            self.i = len(self.buf)
            raise _End
        hend -= at
        fields = wf.parse(bytes(self.buf[at + first_line : at + hend + 2]))
        kind, is_http, length = wf.record_kind(fields)
        offset = self.offset(at)
        if length is None:
            f.damages.append((offset, f"WARC record at byte {offset} has no valid Content-Length"))
            self._resync(f, at + hend + 4)
            return True
        block_at = at + hend + 4
        wanted = bool(kind & r.wanted)
        oversized, too_large = hend + 4 > wf.MAX_HEADER, length > r.cap
        need = (min(length, wf.MAX_HEADER + 4) if is_http else 0) if oversized or too_large else length
        if not self._have(block_at - self.i + need):
            if self.cut() is None:
                block = bytes(self.buf[block_at:])
                f.damages.append((offset, self._truncated(offset, fields, block, length, wanted)))
            self.i = len(self.buf)
            raise _End
        block = bytes(self.buf[block_at : block_at + need])
        http = wf.http_head(block) if is_http else None
        if http is not None:
            ctype = wf.http_text(wf.get(http[1], "Content-Type"))
        else:
            ctype = None if is_http else wf.warc_text(wf.get(fields, "Content-Type"))
        long_head = is_http and http is None
        keep = wanted and (long_head or r.mime_ok(ctype))
        if self.units is None:
            end = offset + hend + 4 + length + 4
        if self.first:  # the record FastWARC read: framed again here, never a row again
            if self.units is None:
                fr.last_end = end
            self.i = block_at
            self._skip_block(f, offset, length)
            self.first = False
            return False
        if not (oversized or too_large):  # a record these rules read whole: FastWARC failed on it
            self._unreadable(f, failed)
            self._resync(f, at + first_line)
            return True
        fr.index = fr.index + 1 if fr.last == offset else 0
        fr.last = offset
        if self.units is None:
            fr.last_end = end
        row = None
        if keep:
            reason, detail = (
                ("record_too_large", f"record block of {length} bytes, over max_record_bytes ({r.cap})")
                if too_large
                else ("bad_warc_header", f"WARC header block of {hend + 4} bytes, over {wf.MAX_HEADER}")
            )
            row = {
                "id": wf.warc_text(wf.get(fields, "WARC-Record-ID")),
                "url": _url(wf.warc_text(wf.get(fields, "WARC-Target-URI"))),
                "date": wf.warc_text(wf.get(fields, "WARC-Date")),
                "warc_type": wf.TYPE_NAMES.get(kind, "unknown"),
                "http_status": http[0] if http is not None else None,
                "content_type": ctype,
                "offset": offset,
                "member_index": fr.index,
                "reason": reason,
                "detail": detail,
            }
        self.i = block_at
        self._skip_block(f, offset, length)
        f.reject = row
        f.resume = self.segment(self.i)
        return True

    def _skip_block(self, f: Finding, offset: int, length: int) -> None:
        """Stream past ``length`` block bytes from ``i``; a block cut short is damage (or the bad unit's)."""
        left = length
        while True:
            step = min(left, len(self.buf) - self.i)
            self.i += step
            left -= step
            if not left:
                return
            self._compact()
            if not self._more():
                if self.cut() is None:
                    got = length - left
                    f.damages.append((offset, f"truncated WARC record at byte {offset}: {got} of {length} bytes"))
                raise _End

    def _truncated(self, offset: int, fields: wf.Fields, block: bytes, length: int, wanted: bool) -> str:
        """The kernel's words for a record cut by the input's end (``record.rs``, ``truncated``)."""
        _, is_http, _ = wf.record_kind(fields)
        http = wf.http_head(block) if is_http else None
        if http is not None:
            ctype = wf.http_text(wf.get(http[1], "Content-Type"))
        else:
            ctype = wf.warc_text(wf.get(fields, "Content-Type"))
        if not wanted or not self.r.mime_ok(ctype):
            return f"truncated WARC record at byte {offset}: {len(block)} of {length} bytes"
        skip = http[2] if http is not None else 0
        return f"truncated WARC record at byte {offset}: {max(len(block) - skip, 0)} of {max(length - skip, 0)}"


def _url(url: str | None) -> str | None:
    """WARC 1.0 examples wrap the URI in ``<>``; an empty one is no URL."""
    return url.strip("<>") if url else None
