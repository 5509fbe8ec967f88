"""The FastWARC path's per-record loop: the fields of each record FastWARC parses moved into column lists, one
Arrow call per column per batch.

The loop stops (and the reader's recovery walker, :mod:`mdf_text.io.warc_walk`, takes over) at a record it
must not keep: one without a valid ``Content-Length`` (FastWARC reads it as 0 and fails on its block as if it
were the next header), and one whose body is shorter than its length (cut by the end of the input or by a bad
gzip member). Records whose framing is whole but that cannot be read are rows rejected with a reason, as the
kernel rejects them: an HTTP head over 32 KiB or a response without a status line (``bad_http``), a block over
``max_record_bytes`` (``record_too_large``: its body is not read, and its row waits until FastWARC found the
next record, which proves the block whole).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from mdf import REASON, REASON_DETAIL, lit
from mdf.storage import redact_url
from mdf_text.io import warc_fields as wf
from mdf_text.io.warc_frame import BodyColumn
from mdf_text.io.warc_walk import Frame, Segment

_CHARSET_RE = r"charset\s*=\s*[\"']?(?P<c>[^\"';,\s]+)"
_I16 = 32767

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("url", pa.string()),
        ("date", pa.timestamp("us", tz="UTC")),
        ("warc_type", pa.string()),
        ("http_status", pa.int16()),
        ("content_type", pa.string()),
        ("charset", pa.string()),
        ("body", pa.binary()),
        ("warc_file", pa.string()),
        ("offset", pa.int64()),
        ("member_index", pa.int32()),
    ]
)


class Columns:
    """Column lists of the batch being built: appends per record, one Arrow array per column per batch.

    :meth:`fill` is the per-record loop. It binds every list's ``append`` to a local once, and the lists are
    cleared (not replaced) after each batch, because at a few microseconds per record the attribute look-ups
    of a method call per record would cost as much as the fields themselves.
    """

    def __init__(
        self,
        path: str,
        wanted: int,
        exact: frozenset[str] | None,
        prefixes: tuple[str, ...],
        cap: int,
        max_batch_bytes: int,
    ) -> None:
        from mdf_text.io import http_body  # imports fastwarc: only where a WARC is read (an optional extra)

        self._dechunk, self._decode = http_body.dechunk, http_body.decode_content
        self.path, self.wanted, self.exact, self.prefixes, self.cap = path, wanted, exact, prefixes, cap
        self.ids: list[str | None] = []
        self.urls: list[str | None] = []
        self.dates: list[str | None] = []
        self.types: list[str] = []
        self.status: list[int | None] = []
        self.ctypes: list[str | None] = []  # raw Content-Type values, parsed per batch
        self.bodies = BodyColumn(max_batch_bytes)
        self.offsets: list[int] = []
        self.indexes: list[int] = []  # member_index: the record's place in its gzip member
        self.reasons: dict[int, tuple[str, str | None]] = {}  # row -> (reason, detail), for the few rejected
        self.pending: tuple[Any, ...] | None = None  # a record_too_large row, until its block is known whole
        self.stop_pos: int | None = None  # decoded position of the record the loop stopped at (not read)
        self.last_pos: int | None = None  # decoded position of the last record FastWARC read

    def fill(
        self, records: Iterator[Any], batch_rows: int, seg: Segment, units: Any, frame: Frame
    ) -> Iterator[pa.RecordBatch]:
        """Append every record; yield a batch each ``batch_rows`` rows (or the byte limit); stop at a record
        the walker must read (see the module)."""
        add_id, add_url, add_date = self.ids.append, self.urls.append, self.dates.append
        add_type, add_status, add_ctype = self.types.append, self.status.append, self.ctypes.append
        add_offset, add_member, bodies = self.offsets.append, self.indexes.append, self.bodies
        wanted, exact, prefixes, cap, names = self.wanted, self.exact, self.prefixes, self.cap, wf.TYPE_NAMES
        self.stop_pos = self.last_pos = None
        base, index, last, kept = seg.at, frame.index, frame.last, -1
        # units: decoded start and file offset of each, read in place (a method call per record cost as much
        # as the bisection)
        starts, ats = units.starts() if units is not None else (None, None)
        try:
            for rec in records:
                pos = rec.stream_pos
                length = rec.content_length
                headers = rec.headers
                # FastWARC reads a missing Content-Length as 0, or (records parsed in place) leaves the previous
                # record's: only then are the headers asked (a lookup per record cost ~10 % of this loop)
                if (not length or length == kept) and _length(headers) != length:
                    self.stop_pos = pos
                    return
                kept = length
                if self.pending is not None:  # FastWARC found this record after the skipped block: it was whole
                    if len(self.ids) >= batch_rows:
                        yield self.batch()
                    self._append(self.pending)
                    self.pending = None
                offset = base + pos if ats is None else ats[bisect_right(starts, pos) - 1]
                before = index, last
                index = index + 1 if offset == last else 0  # records after the first in one gzip member
                last = offset
                self.last_pos = pos
                rtype = int(rec.record_type)
                if not rtype & wanted:
                    continue
                http = why = detail = None
                if rec.is_http:
                    try:
                        rec.parse_http()
                        http = rec.http_headers
                        kept = rec.content_length  # now the payload's: what a next record without one keeps
                    except OSError:  # FastWARC's "Maximum header length exceeded."
                        why, detail = "bad_http", f"HTTP header block longer than {wf.MAX_HEADER} bytes"
                ctype = http.get("Content-Type") if http is not None else None
                if not rec.is_http:
                    ctype = headers.get("Content-Type")
                if exact is not None and why is None:
                    mime = _mime(ctype)
                    if mime not in exact and not (mime and mime.startswith(prefixes)):
                        continue
                status = http.status_code if http is not None else None
                url = headers.get("WARC-Target-URI")
                fields = (rec.record_id, url, headers.get("WARC-Date"), names.get(rtype, "unknown"), status, ctype)
                if length > cap:  # not read: the row waits for the next record (or the walker) to prove it whole
                    detail = f"record block of {length} bytes, over max_record_bytes ({cap})"
                    self.pending = (*fields, offset, index, b"", "record_too_large", detail)
                    continue
                body = b""
                if http is not None or not rec.is_http:
                    body = rec.reader.read()
                    if len(body) < rec.content_length:  # cut short: the walker says by what
                        index, last = before
                        self.stop_pos = pos
                        return
                if http is not None:
                    if rtype == wf.RESPONSE and not (status is not None and 100 <= status <= 999):
                        why, detail = "bad_http", "no HTTP status line"
                    if http.get("Transfer-Encoding", "").lower().endswith("chunked"):
                        body = self._dechunk(body)
                    encoding = http.get("Content-Encoding")
                    if encoding:
                        body, coded, more = self._decode(body, encoding, cap)
                        if why is None and coded is not None:
                            why, detail = coded, more
                if len(self.ids) >= batch_rows or not bodies.fits(len(body)):
                    yield self.batch()
                if why is not None:
                    self.reasons[len(self.ids)] = ("reader:" + why, detail)
                add_id(fields[0])
                add_url(url.strip("<>") if url else None)  # WARC 1.0 examples wrap the URI in <>
                add_date(fields[2])
                add_type(fields[3])
                add_status(status if status is None or status <= _I16 else None)
                add_ctype(ctype)
                bodies.append(body)
                add_offset(offset)
                add_member(index)
        finally:  # the walker and the next segment go on from here
            frame.index, frame.last = index, last

    def full(self, batch_rows: int) -> bool:
        return len(self.ids) >= batch_rows

    def _append(self, row: tuple[Any, ...]) -> None:
        """A row not read by the loop: a pending ``record_too_large`` one, or one the walker rejected."""
        rid, url, date, kind, status, ctype, offset, index, body, reason, detail = row
        self.reasons[len(self.ids)] = ("reader:" + reason, detail)
        self.ids.append(rid)
        self.urls.append(url.strip("<>") if url else None)
        self.dates.append(date)
        self.types.append(kind)
        self.status.append(status if status is None or status <= _I16 else None)
        self.ctypes.append(ctype)
        self.bodies.append(body)
        self.offsets.append(offset)
        self.indexes.append(index)

    def settle(self, whole: bool) -> None:
        """The pending ``record_too_large`` row is a row if its block was whole, else its damage covers it."""
        if self.pending is not None and whole:
            self._append(self.pending)
        self.pending = None

    def reject(self, row: dict[str, Any]) -> None:
        keys = ("id", "url", "date", "warc_type", "http_status", "content_type", "offset", "member_index")
        self._append((*(row[k] for k in keys), b"", row["reason"], row["detail"]))

    def rows(self) -> int:
        return len(self.ids)

    def batch(self) -> pa.RecordBatch:
        n = len(self.ids)
        mime, charset = content_types(self.ctypes)
        arrays = [
            pa.array(self.ids, pa.string()),
            pa.array(self.urls, pa.string()),
            dates(self.dates),
            pa.array(self.types, pa.string()),
            pa.array(self.status, pa.int16()),
            mime,
            charset,
            self.bodies.array(n),
            pa.repeat(pa.scalar(redact_url(self.path), pa.string()), n),  # without the URL's credentials
            pa.array(self.offsets, pa.int64()),
            pa.array(self.indexes, pa.int32()),
        ]
        batch = pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)
        if self.reasons:
            got = [self.reasons.get(i, (None, None)) for i in range(n)]
            batch = batch.append_column(REASON, pa.array([g[0] for g in got], pa.string()))
            batch = batch.append_column(REASON_DETAIL, pa.array([g[1] for g in got], pa.string()))
        lists = (self.ids, self.urls, self.dates, self.types, self.status, self.ctypes, self.offsets, self.indexes)
        for column in lists:
            column.clear()
        self.reasons.clear()
        return batch


def _length(headers: Any) -> int | None:
    """The record's length by the kernel's rule (``None``: no valid ``Content-Length``), asked only where the
    header does not plainly say FastWARC's length: rare."""
    items = [(k.encode("utf-8", "replace"), v.encode("utf-8", "replace")) for k, v in headers.astuples()]
    return wf.record_kind(items)[2]


def _mime(content_type: str | None) -> str | None:
    """``Text/HTML; charset=UTF-8`` -> ``text/html`` (per record, only where a mime_types filter needs it)."""
    return content_type.partition(";")[0].strip().lower() or None if content_type else None


def content_types(raw: list[str | None] | pa.Array) -> tuple[pa.Array, pa.Array]:
    """Content-Type header values -> (mime type, charset) columns, lower-cased, parsed once per batch."""
    lower = pc.utf8_lower(raw if isinstance(raw, pa.Array) else pa.array(raw, pa.string()))
    mime = pc.utf8_trim_whitespace(pc.list_element(pc.split_pattern(lower, ";", max_splits=1), 0))
    mime = pc.if_else(pc.equal(mime, lit("")), pa.scalar(None, pa.string()), mime)
    charset = pc.struct_field(pc.extract_regex(lower, _CHARSET_RE), "c")
    return mime, charset


def dates(values: list[str | None] | pa.Array) -> pa.Array:
    """WARC-Date (ISO 8601, UTC) as timestamps; one vectorised cast, per value only if a date is malformed."""
    strings = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
    target = pa.timestamp("us", tz="UTC")
    try:
        return pc.cast(strings, target)
    except pa.ArrowInvalid:
        out = []
        for v in strings.to_pylist():
            try:
                out.append(pc.cast(pa.scalar(v, pa.string()), target))
            except pa.ArrowInvalid:
                out.append(pa.scalar(None, target))
        return pa.array([s.as_py() for s in out], target)
