"""``warc`` reader: WARC / WARC.gz / WET files into Arrow batches, one row per record, on FastWARC.

FastWARC (Rust since 2.0) parses records and HTTP headers and inflates gzip members; this module only moves
the fields of each record into column lists and builds each column with one Arrow call per batch, so the Python
work per record is a handful of attribute reads. Payloads are read raw and decoded here (see
:mod:`mdf_text.io.http_body`) because only the raw length, compared with the record's Content-Length, shows
a record cut short: FastWARC yields a clipped last record without complaint.

Damage (a truncated record, a stream that stops parsing) ends the shard: the rows read before it go on, and
one ``reader:damaged_input`` row records the file, the offset and the error, so a damaged file is never
silently short. A payload whose Content-Encoding cannot be decoded is one rejected row
(``reader:bad_content_encoding``), and the file goes on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing, nullcontext
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, field_validator

from mdf import REASON, Params, Reader, Shard, damaged_input_batch, expand_paths, shard_ids
from mdf_text.io.warc_split import Window, cut_points, record_end

RecordType = Literal["warcinfo", "response", "resource", "request", "metadata", "revisit", "conversion", "continuation"]
_TYPE_BITS = {
    "warcinfo": 2,
    "response": 4,
    "resource": 8,
    "request": 16,
    "metadata": 32,
    "revisit": 64,
    "conversion": 128,
    "continuation": 256,
}
_TYPE_NAMES = {bit: name for name, bit in _TYPE_BITS.items()} | {512: "unknown"}
_MAX_BATCH_BYTES = 256 << 20  # a batch's body column stays far below binary()'s 2 GiB offsets
_BUFFER = 1 << 20

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
    ]
)


class WarcReader(Reader):
    """Reads WARC, WARC.gz and WET files: one row per record (url, date, HTTP status/type/charset, decoded body)."""

    name = "warc"
    requires = {"fastwarc": "mdf-text[web]"}

    class Params(Params):
        paths: list[str] = Field(min_length=1, description="WARC files (.warc, .warc.gz, .wet.gz), folders or globs")
        record_types: list[RecordType] = Field(
            ["response"], min_length=1, description="WARC-Type values to read (WET text: [conversion])"
        )
        mime_types: list[str] | None = Field(
            None, description="keep records whose content type is one of these ('text/html', 'text/*'); none = all"
        )
        bytes_per_shard: int = Field(
            0, ge=0, description="cut files bigger than this at record boundaries into several shards (0 = file)"
        )

        @field_validator("mime_types")
        @classmethod
        def _lower(cls, value: list[str] | None) -> list[str] | None:
            return [m.strip().lower() for m in value] if value is not None else None

    def shards(self) -> list[Shard]:
        files = expand_paths(self.params.paths)
        out: list[Shard] = []
        step = self.params.bytes_per_shard
        for path, sid in zip(files, shard_ids(files), strict=True):
            size = os.path.getsize(path)
            cuts = cut_points(path, size, step) if step and size > step else [0]
            if len(cuts) == 1:
                out.append(Shard(sid, path, size))
                continue
            for i, (start, stop) in enumerate(zip(cuts, [*cuts[1:], size], strict=True)):
                out.append(Shard(f"{sid}-b{i:05d}", path, size, start, stop))
        return out

    def read(self, shard: Shard, batch_rows: int) -> Iterator[pa.RecordBatch]:
        from fastwarc.warc import ArchiveIterator

        cols = _Columns(shard.path)
        base = shard.start or 0
        source: Any = shard.path if shard.start is None else Window(shard.path, shard.start, shard.stop or shard.size)
        mask = 0
        for t in self.params.record_types:
            mask |= _TYPE_BITS[t]
        exact, prefixes = _mime_sets(self.params.mime_types)
        last = base
        damage: tuple[int, str] | None = None
        owner: AbstractContextManager[Any] = closing(source) if isinstance(source, Window) else nullcontext()
        with owner:
            records = ArchiveIterator(source, record_types=mask, auto_decode="none", inplace=True, buffer_size=_BUFFER)
            try:
                for rec in records:
                    last = base + rec.stream_pos
                    cols.seen = True
                    damage = cols.add(rec, last, exact, prefixes)
                    if damage is not None:
                        break
                    if len(cols) >= batch_rows or cols.nbytes >= _MAX_BATCH_BYTES:
                        yield cols.batch()
            except OSError as exc:  # FastWARC reports unparseable headers and broken compression as OSError
                at = (record_end(shard.path, last) if cols.seen else None) or last
                damage = (at, f"unreadable WARC data at byte {at} (after the record at byte {last}): {exc}")
        if len(cols):
            yield cols.batch()
        if damage is not None:
            yield damaged_input_batch(shard, damage[0], damage[1])


def _mime_sets(mime_types: list[str] | None) -> tuple[frozenset[str] | None, tuple[str, ...]]:
    if mime_types is None:
        return None, ()
    exact = frozenset(m for m in mime_types if not m.endswith("/*"))
    return exact, tuple(m[:-1] for m in mime_types if m.endswith("/*"))


def _split_content_type(value: str | None) -> tuple[str | None, str | None]:
    """``text/plain; charset=UTF-8`` -> (``text/plain``, ``utf-8``), for records that are not HTTP."""
    if not value:
        return None, None
    mime, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset":
            charset = val.strip().strip("\"'").lower() or None
    return mime.strip().lower() or None, charset


class _Columns:
    """Column lists of the batch being built: appends per record, one Arrow array per column per batch."""

    def __init__(self, path: str) -> None:
        from mdf_text.io import http_body  # imports fastwarc: only where a WARC is read (an optional extra)

        self._dechunk, self._decode = http_body.dechunk, http_body.decode_content
        self.path = path
        self.nbytes = 0
        self.seen = False  # a record was parsed (so an error is *after* it)
        self._clear()

    def _clear(self) -> None:
        self.ids: list[str | None] = []
        self.urls: list[str | None] = []
        self.dates: list[str | None] = []
        self.types: list[str] = []
        self.status: list[int | None] = []
        self.ctypes: list[str | None] = []
        self.charsets: list[str | None] = []
        self.bodies: list[bytes] = []
        self.offsets: list[int] = []
        self.reasons: list[str | None] = []
        self.rejected = 0
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self.ids)

    def add(
        self, rec: Any, offset: int, exact: frozenset[str] | None, prefixes: tuple[str, ...]
    ) -> tuple[int, str] | None:
        """Append one record; return ``(offset, message)`` instead when the record is damaged."""
        if rec.is_http:
            http = rec.http_headers
            status, ctype, charset = http.status_code, rec.http_content_type, rec.http_charset
        else:
            http, status = None, None
            ctype, charset = _split_content_type(rec.headers.get("Content-Type"))
        if exact is not None and ctype not in exact and not (ctype and ctype.startswith(prefixes)):
            return None
        body = rec.reader.read()
        if len(body) < rec.content_length:
            return offset, f"truncated WARC record at byte {offset}: {len(body)} of {rec.content_length} bytes"
        reason = None
        if http is not None:
            if http.get("Transfer-Encoding", "").lower().endswith("chunked"):
                body = self._dechunk(body)
            encoding = http.get("Content-Encoding")
            if encoding:
                body, why = self._decode(body, encoding)
                if why is not None:
                    reason = "reader:" + why
                    self.rejected += 1
        headers = rec.headers
        url = headers.get("WARC-Target-URI")
        self.ids.append(rec.record_id)
        self.urls.append(url.strip("<>") if url else None)  # WARC 1.0 examples wrap the URI in <>
        self.dates.append(headers.get("WARC-Date"))
        self.types.append(_TYPE_NAMES.get(int(rec.record_type), "unknown"))
        self.status.append(status)
        self.ctypes.append(ctype)
        self.charsets.append(charset)
        self.bodies.append(body)
        self.offsets.append(offset)
        self.reasons.append(reason)
        self.nbytes += len(body)
        return None

    def batch(self) -> pa.RecordBatch:
        n = len(self.ids)
        arrays = [
            pa.array(self.ids, pa.string()),
            pa.array(self.urls, pa.string()),
            _dates(self.dates),
            pa.array(self.types, pa.string()),
            pa.array(self.status, pa.int16()),
            pa.array(self.ctypes, pa.string()),
            pa.array(self.charsets, pa.string()),
            pa.array(self.bodies, pa.binary()),
            pa.repeat(pa.scalar(self.path, pa.string()), n),
            pa.array(self.offsets, pa.int64()),
        ]
        batch = pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)
        if self.rejected:
            batch = batch.append_column(REASON, pa.array(self.reasons, pa.string()))
        self._clear()
        return batch


def _dates(values: list[str | None]) -> pa.Array:
    """WARC-Date (ISO 8601, UTC) as timestamps; one vectorised cast, per value only if a date is malformed."""
    strings = pa.array(values, pa.string())
    target = pa.timestamp("us", tz="UTC")
    try:
        return pc.cast(strings, target)
    except pa.ArrowInvalid:
        out = []
        for v in values:
            try:
                out.append(pc.cast(pa.scalar(v, pa.string()), target))
            except pa.ArrowInvalid:
                out.append(pa.scalar(None, target))
        return pa.array([s.as_py() for s in out], target)
