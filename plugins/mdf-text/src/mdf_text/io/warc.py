"""``warc`` reader: WARC / WARC.gz / WET files into Arrow batches, one row per record.

Two engines, same rows and damage: the Rust kernel ``mdf_kernels.WarcScanner`` (:mod:`mdf_text.io.warc_native`)
when the installed ``mdf-kernels`` has it, else FastWARC from Python (this module, described below; also
FastWARC's zstd and lz4 files). ``tests/test_warc_kernel.py`` reads every file both ways and compares.

FastWARC (Rust since 2.0) parses records and HTTP headers; this module only moves the fields of each record
into column lists and builds each column with one Arrow call per batch, so the Python work per record is a
handful of attribute reads. Payloads are read raw and decoded here (see :mod:`mdf_text.io.http_body`) because
only the raw length, compared with the record's Content-Length, shows a record cut short: FastWARC yields a
clipped last record without complaint.

Gzip members are inflated here (:class:`mdf_text.io.warc_frame.Members`, zlib-ng), not by FastWARC, because
only then is ``offset`` the start of the member that holds the record: FastWARC's position is a later member's
when one member holds several records. Inflating is most of the reader's CPU time on .warc.gz: with zlib-ng and
one Python call per 16 KiB read the reader is ~0.5x a bare FastWARC loop that keeps nothing, ~0.7-0.8x a FastWARC
loop that builds the same table (``benchmarks/bench_warc_read.py``); a few per cent of a pipeline that extracts
HTML.

Every record of the file passes through the loop, also those of types not asked for (filtered here by a bit
test), for two reasons: ``member_index`` counts every record of a gzip member, so ``offset`` +
``member_index`` find a record again; and the last record seen is then near the end of the file, from where
:func:`mdf_text.io.warc_frame.check_tail` proves the rest of the file is whole records -- FastWARC stops
silently at a gzip member or a header cut short, and never reads the bodies of records it skips.

Damage (a truncated record, a stream that stops parsing, a tail that is not whole records) ends the shard: the
rows read before it go on, and one ``reader:damaged_input`` row records the file, the offset and the error, so
a damaged file is never silently short. A payload whose Content-Encoding cannot be decoded is one rejected row
(``reader:bad_content_encoding``), and the file goes on.

``paths`` take URLs (``s3://bucket/crawl/**/*.warc.gz``, ``https://host/x.warc.gz``): a remote file is streamed
through :mod:`mdf.storage` in 8 MiB ranged requests (bounded memory; resumed at the byte where a connection
broke). ``warc_file`` is the URL without its credentials (:func:`mdf.storage.redact_url`: a presigned URL's
signature or a ``?token=`` is not copied into every row). ``commoncrawl`` names a crawl the way CommonCrawl
publishes it, a ``warc.paths.gz`` listing, a base and a slice (:mod:`mdf.storage.commoncrawl`), instead of
listing files.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import closing
from functools import partial
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, field_validator, model_validator

from mdf import REASON, Params, Reader, Shard, damaged_input_batch, expand_paths, lit, shard_ids
from mdf.storage import CommonCrawlListing, commoncrawl_urls, default, is_remote, redact_url
from mdf_text.io import warc_native
from mdf_text.io.warc_frame import MAX_BATCH_BYTES, BodyColumn, Members, check_tail
from mdf_text.io.warc_split import Window, cut_points, is_gzip, open_binary, record_end

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
_CHARSET_RE = r"charset\s*=\s*[\"']?(?P<c>[^\"';,\s]+)"
_BUFFER = 1 << 20
_STREAM = 8 << 20  # ranged-request size when the file is remote
_MAX_BATCH_BYTES = MAX_BATCH_BYTES  # read at each call (a test makes it small)

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


class WarcReader(Reader):
    """Reads WARC, WARC.gz and WET files: one row per record (url, date, HTTP status/type/charset, decoded body)."""

    name = "warc"
    modality = "text"
    requires = {"fastwarc": "mdf-text[web]"}

    class Params(Params):
        paths: list[str] = Field(
            default_factory=list,
            description="WARC files (.warc, .warc.gz, .wet.gz), folders or globs; local or URLs (s3://, https://)",
        )
        commoncrawl: CommonCrawlListing | None = Field(
            None,
            description="a crawl by its listing instead of paths: {paths_file: warc.paths.gz, base:"
            " s3://commoncrawl/ or https://data.commoncrawl.org/, first/limit or shard/of}",
        )
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

        @model_validator(mode="after")
        def _one_source(self) -> WarcReader.Params:
            if bool(self.paths) == (self.commoncrawl is not None):
                raise ValueError("set exactly one of paths (files, folders, globs, URLs) and commoncrawl (a listing)")
            return self

    def shards(self) -> list[Shard]:
        listing = self.params.commoncrawl
        if listing is not None:  # each listed object is looked up (HEAD): a missing one fails here, named
            files = expand_paths(commoncrawl_urls(listing, yaml_path="reader.commoncrawl"), "reader.commoncrawl")
        else:
            files = expand_paths(self.params.paths)
        out: list[Shard] = []
        step = self.params.bytes_per_shard
        for path, sid in zip(files, shard_ids(files), strict=True):
            size = default().info(path).size if is_remote(path) else os.path.getsize(path)
            cuts = cut_points(path, size, step) if step and size > step else [0]
            if len(cuts) == 1:
                out.append(Shard(sid, path, size))
                continue
            for i, (start, stop) in enumerate(zip(cuts, [*cuts[1:], size], strict=True)):
                out.append(Shard(f"{sid}-b{i:05d}", path, size, start, stop))
        return out

    def read(self, shard: Shard, batch_rows: int) -> Iterator[pa.RecordBatch]:
        wanted = 0
        for t in self.params.record_types:
            wanted |= _TYPE_BITS[t]
        mime = _mime_sets(self.params.mime_types)
        gz = is_gzip(shard.path)
        if warc_native.available():  # the Rust kernel: same rows and damage, zstd and lz4 files excepted
            finish = partial(_finish, redact_url(shard.path))  # warc_file: the URL without its credentials
            native = warc_native.read(shard, _open(shard), gz, wanted, mime, batch_rows, _MAX_BATCH_BYTES, finish)
            if native is not None:
                yield from native
                return
        yield from self._read_fastwarc(shard, batch_rows, gz, wanted, mime)

    def _read_fastwarc(
        self, shard: Shard, batch_rows: int, gz: bool, wanted: int, mime: tuple[frozenset[str] | None, tuple[str, ...]]
    ) -> Iterator[pa.RecordBatch]:
        from fastwarc.warc import ArchiveIterator, WarcRecordType

        start, stop = shard.start or 0, shard.stop or shard.size
        cols = _Columns(shard.path, start, wanted, *mime)
        raw = _open(shard)
        with closing(raw):
            source = cols.members = Members(raw, start) if gz else None
            records = ArchiveIterator(
                source or raw,
                record_types=WarcRecordType.any_type,
                auto_decode="none",
                inplace=True,
                buffer_size=_BUFFER,
            )
            try:
                yield from cols.fill(records, batch_rows)
            except OSError as exc:  # FastWARC reports unparseable headers as OSError
                last = cols.last
                at = cols.base if last is None else record_end(shard.path, last) or last
                cols.damage = (at, f"unreadable WARC data at byte {at} (after the record at byte {last}): {exc}")
        if cols.damage is None and cols.members is not None:  # a gzip member cut short or not one
            cols.damage = cols.members.error
        if cols.damage is None:  # FastWARC ended quietly: were the bytes after the last record whole records?
            cols.damage = check_tail(shard.path, start if cols.last is None else cols.last, stop)
        if len(cols.ids):
            yield cols.batch()
        if cols.damage is not None:
            yield damaged_input_batch(shard, *cols.damage)


def _open(shard: Shard) -> Any:
    """The shard's bytes as a stream; a remote file streams in 8 MiB ranged requests, one fetched ahead."""
    if shard.start is None:
        return open_binary(shard.path, shard.size, _STREAM)
    return Window(shard.path, shard.start, shard.stop or shard.size, shard.size, _STREAM)


def _finish(path: str, struct: pa.StructArray, reasons: list[str | None] | None, body: pa.Array) -> pa.RecordBatch:
    """A batch of the Rust kernel (:mod:`mdf_text.io.warc_native`) in the reader's schema."""
    n = len(struct)
    mime, charset = _split_content_types(struct)
    arrays = [
        struct.field("id"),
        struct.field("url"),
        _dates(struct.field("date")),
        struct.field("warc_type"),
        struct.field("http_status"),
        mime,
        charset,
        body,
        pa.repeat(pa.scalar(path, pa.string()), n),
        struct.field("offset"),
        struct.field("member_index"),
    ]
    batch = pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)
    return batch if reasons is None else batch.append_column(REASON, pa.array(reasons, pa.string()))


def _split_content_types(struct: pa.StructArray) -> tuple[pa.Array, pa.Array]:
    """The kernel's split of Content-Type (``mime``, ``charset``: ASCII values only), the rows it left (a value
    outside ASCII) split by :func:`_content_types`."""
    raw = struct.field("content_type")
    mime, charset = struct.field("mime"), struct.field("charset")
    ascii_ = pc.fill_null(pc.string_is_ascii(raw), True)
    if pc.all(ascii_).as_py() is not False:
        return mime, charset
    py_mime, py_charset = _content_types(raw)
    return pc.if_else(ascii_, mime, py_mime), pc.if_else(ascii_, charset, py_charset)


def _mime_sets(mime_types: list[str] | None) -> tuple[frozenset[str] | None, tuple[str, ...]]:
    if mime_types is None:
        return None, ()
    exact = frozenset(m for m in mime_types if not m.endswith("/*"))
    return exact, tuple(m[:-1] for m in mime_types if m.endswith("/*"))


def _mime(content_type: str | None) -> str | None:
    """``Text/HTML; charset=UTF-8`` -> ``text/html`` (per record, only where a mime_types filter needs it)."""
    return content_type.partition(";")[0].strip().lower() or None if content_type else None


def _content_types(raw: list[str | None] | pa.Array) -> tuple[pa.Array, pa.Array]:
    """Content-Type header values -> (mime type, charset) columns, lower-cased, parsed once per batch."""
    lower = pc.utf8_lower(raw if isinstance(raw, pa.Array) else pa.array(raw, pa.string()))
    mime = pc.utf8_trim_whitespace(pc.list_element(pc.split_pattern(lower, ";", max_splits=1), 0))
    mime = pc.if_else(pc.equal(mime, lit("")), pa.scalar(None, pa.string()), mime)
    charset = pc.struct_field(pc.extract_regex(lower, _CHARSET_RE), "c")
    return mime, charset


class _Columns:
    """Column lists of the batch being built: appends per record, one Arrow array per column per batch.

    :meth:`fill` is the per-record loop. It binds every list's ``append`` to a local once, and the lists are
    cleared (not replaced) after each batch, because at a few microseconds per record the attribute look-ups
    of a method call per record would cost as much as the fields themselves.
    """

    def __init__(
        self, path: str, base: int, wanted: int, exact: frozenset[str] | None, prefixes: tuple[str, ...]
    ) -> None:
        from mdf_text.io import http_body  # imports fastwarc: only where a WARC is read (an optional extra)

        self._dechunk, self._decode = http_body.dechunk, http_body.decode_content
        self.path, self.base, self.wanted, self.exact, self.prefixes = path, base, wanted, exact, prefixes
        self.ids: list[str | None] = []
        self.urls: list[str | None] = []
        self.dates: list[str | None] = []
        self.types: list[str] = []
        self.status: list[int | None] = []
        self.ctypes: list[str | None] = []  # raw Content-Type values, parsed per batch
        self.bodies = BodyColumn(_MAX_BATCH_BYTES)
        self.offsets: list[int] = []
        self.indexes: list[int] = []  # member_index: the record's place in its gzip member
        self.reasons: dict[int, str] = {}  # row -> reason, for the few rows rejected
        self.last: int | None = None  # offset of the last record parsed, of any type (an error is after it)
        self.damage: tuple[int, str] | None = None
        self.members: Members | None = None  # a .warc.gz inflated here: maps a record to its gzip member

    def fill(self, records: Iterator[Any], batch_rows: int) -> Iterator[pa.RecordBatch]:
        """Append every record; yield a batch each ``batch_rows`` rows (or 256 MiB); stop at a damaged record."""
        add_id, add_url, add_date = self.ids.append, self.urls.append, self.dates.append
        add_type, add_status, add_ctype = self.types.append, self.status.append, self.ctypes.append
        add_offset, add_member, bodies = self.offsets.append, self.indexes.append, self.bodies
        base, wanted, exact, prefixes, names = self.base, self.wanted, self.exact, self.prefixes, _TYPE_NAMES
        index, last = 0, self.last
        # gzip members: decoded start and file offset of each, read in place (a method call per record cost
        # as much as the bisection)
        starts, ats = self.members.starts() if self.members is not None else (None, None)
        try:
            for rec in records:
                pos = rec.stream_pos
                offset = base + pos if ats is None else ats[bisect_right(starts, pos) - 1]
                index = index + 1 if offset == last else 0  # records after the first in one gzip member
                last = offset
                rtype = int(rec.record_type)
                if not rtype & wanted:
                    continue
                headers = rec.headers
                http = rec.http_headers if rec.is_http else None
                ctype = (http or headers).get("Content-Type")
                if exact is not None:
                    mime = _mime(ctype)
                    if mime not in exact and not (mime and mime.startswith(prefixes)):
                        continue
                body = rec.reader.read()
                if len(body) < rec.content_length:
                    self.damage = (
                        offset,
                        f"truncated WARC record at byte {offset}: {len(body)} of {rec.content_length}",
                    )
                    return
                status = why = None
                if http is not None:
                    status = http.status_code
                    if http.get("Transfer-Encoding", "").lower().endswith("chunked"):
                        body = self._dechunk(body)
                    encoding = http.get("Content-Encoding")
                    if encoding:
                        body, why = self._decode(body, encoding)
                if len(self.ids) >= batch_rows or not bodies.fits(len(body)):
                    yield self.batch()
                if why is not None:
                    self.reasons[len(self.ids)] = "reader:" + why
                url = headers.get("WARC-Target-URI")
                add_id(rec.record_id)
                add_url(url.strip("<>") if url else None)  # WARC 1.0 examples wrap the URI in <>
                add_date(headers.get("WARC-Date"))
                add_type(names.get(rtype, "unknown"))
                add_status(status)
                add_ctype(ctype)
                bodies.append(body)
                add_offset(offset)
                add_member(index)
        finally:  # read() names the record a parse error came after
            self.last = last

    def batch(self) -> pa.RecordBatch:
        n = len(self.ids)
        mime, charset = _content_types(self.ctypes)
        arrays = [
            pa.array(self.ids, pa.string()),
            pa.array(self.urls, pa.string()),
            _dates(self.dates),
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
            reasons = [self.reasons.get(i) for i in range(n)]
            batch = batch.append_column(REASON, pa.array(reasons, pa.string()))
        lists = (self.ids, self.urls, self.dates, self.types, self.status, self.ctypes, self.offsets, self.indexes)
        for column in lists:
            column.clear()
        self.reasons.clear()
        return batch


def _dates(values: list[str | None] | pa.Array) -> pa.Array:
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
