"""``warc`` reader: WARC / WARC.gz / WARC.zst / WET files into Arrow batches, one row per record.

Two engines, same rows and damage: the Rust kernel ``mdf_kernels.WarcScanner`` (:mod:`mdf_text.io.warc_native`)
when the installed ``mdf-kernels`` has it (plain and gzip files), else FastWARC from Python (this module, below;
also zstd files, and lz4 ones, which FastWARC alone reads). ``tests/test_warc_kernel.py`` reads every file both
ways and compares.

FastWARC (Rust since 2.0) parses records and HTTP headers; :mod:`mdf_text.io.warc_columns` only moves the
fields of each record into column lists and builds each column with one Arrow call per batch, so the Python
work per record is a handful of attribute reads. Payloads are read raw and decoded there
(:mod:`mdf_text.io.http_body`) because only the raw length, compared with the record's Content-Length, shows a
record cut short: FastWARC yields a clipped last record without complaint.

Gzip members and zstd frames are inflated here (:class:`mdf_text.io.warc_units.Units`), not by FastWARC,
because only then is ``offset`` the start of the unit that holds the record, and a damaged unit costs that unit
alone. Inflating is most of the reader's CPU time on .warc.gz: with zlib-ng and one Python call per 16 KiB read
the reader is ~0.5x a bare FastWARC loop that keeps nothing, ~0.7-0.8x a FastWARC loop that builds the same
table (``benchmarks/bench_warc_read.py``); a few per cent of a pipeline that extracts HTML.

Every byte of the shard is accounted for, by the kernel's rules (``rust/src/warc/record.rs``). FastWARC reads
the records it can; where it stops (a parse error, a record without ``Content-Length``, a body cut short, the
end of its stream) the recovery walker (:mod:`mdf_text.io.warc_walk`) reads on from the last record FastWARC
read: it reports damage (one ``reader:damaged_input`` row each: bytes that are no record, a record without
``Content-Length``, a record or unit cut short, bad gzip or zstd data), rejects a record whose framing is whole
but that FastWARC cannot read (``reader:bad_warc_header``, ``reader:record_too_large``), and says where FastWARC
goes on: the next ``WARC/1.x`` line, the record after, or the next good unit. So a damaged file is never
silently short, and its damage costs only the damaged part. A payload whose Content-Encoding cannot be decoded
is one rejected row (``reader:bad_content_encoding``), and the file goes on.

``max_record_bytes`` bounds what one record may hold in memory: a longer block is rejected
(``reader:record_too_large``) as it streams past, and a body that decodes past it too.

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

from mdf import REASON, REASON_DETAIL, Params, Reader, Shard, damaged_input_batch, expand_paths, shard_ids
from mdf.storage import CommonCrawlListing, commoncrawl_urls, default, is_remote, redact_url
from mdf_text.io import warc_native
from mdf_text.io.warc_columns import SCHEMA, Columns, content_types, dates
from mdf_text.io.warc_frame import MAX_BATCH_BYTES
from mdf_text.io.warc_split import Window, cut_points, open_binary
from mdf_text.io.warc_units import Units, codec_of, unit_kind, zstd_dictionary
from mdf_text.io.warc_walk import Frame, Rules, Segment, Walker

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
_BUFFER = 1 << 20
_STREAM = 8 << 20  # ranged-request size when the file is remote
_MAX_BATCH_BYTES = MAX_BATCH_BYTES  # read at each call (a test makes it small)
MAX_RECORD_BYTES = 64 << 20
_READER, _COLON = pa.scalar("reader", pa.string()), pa.scalar(":", pa.string())


class WarcReader(Reader):
    """Reads WARC, WARC.gz, WARC.zst and WET files: one row per record (url, date, HTTP status/type/charset, body)."""

    name = "warc"
    modality = "text"
    requires = {"fastwarc": "mdf-text[web]"}

    class Params(Params):
        paths: list[str] = Field(
            default_factory=list,
            description="WARC files (.warc, .warc.gz, .warc.zst, .wet.gz), folders or globs; local or URLs",
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
        max_record_bytes: int = Field(
            MAX_RECORD_BYTES,
            ge=1024,
            le=1 << 30,
            description="a record block (or a body decoded from it) longer than this is rejected,"
            " reader:record_too_large, and streamed past, never held whole (64 MiB)",
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
        cap = self.params.max_record_bytes
        with open_binary(shard.path) as f:
            codec = codec_of(f.read(8))
        if warc_native.available() and codec in ("gzip", "plain"):  # the Rust kernel: same rows and damage
            finish = partial(_finish, redact_url(shard.path))  # warc_file: the URL without its credentials
            limit = _MAX_BATCH_BYTES
            gz = codec == "gzip"
            yield from warc_native.read(shard, _open(shard), gz, wanted, mime, batch_rows, limit, cap, finish)
            return
        yield from self._read_fastwarc(shard, batch_rows, codec, wanted, mime)

    def _read_fastwarc(
        self,
        shard: Shard,
        batch_rows: int,
        codec: str,
        wanted: int,
        mime: tuple[frozenset[str] | None, tuple[str, ...]],
    ) -> Iterator[pa.RecordBatch]:
        from fastwarc.warc import ArchiveIterator, WarcRecordType

        start, stop, cap = shard.start or 0, shard.stop or shard.size, self.params.max_record_bytes
        cols = Columns(shard.path, wanted, *mime, cap, _MAX_BATCH_BYTES)
        if codec == "lz4":  # FastWARC's own codec: read by FastWARC alone, without the recovery walker
            yield from _read_lz4(shard, cols, batch_rows)
            return
        dictionary = zstd_dictionary(shard.path) if codec == "zstd" else None
        kind = unit_kind(codec, dictionary) if codec != "plain" else None
        rules = Rules(shard.path, shard.size, start, stop, codec, kind, dictionary, wanted, *mime, cap)
        frame, damages = Frame(), []
        seg: Segment | None = Segment(start)
        while seg is not None:
            raw = Window(shard.path, seg.at, stop, shard.size, _STREAM)
            units = Units(raw, seg.at, kind) if kind is not None else None
            failed = "FastWARC stopped before this record"
            with closing(raw):
                if units is not None:
                    units.skip(seg.skip)
                records = ArchiveIterator(
                    units or raw,
                    record_types=WarcRecordType.any_type,
                    parse_http=False,
                    auto_decode="none",
                    inplace=True,
                    buffer_size=_BUFFER,
                )
                try:
                    yield from cols.fill(records, batch_rows, seg, units, frame)
                except OSError as exc:  # FastWARC reports unparseable headers as OSError
                    failed = str(exc)
            # the walker reads on from the record the loop stopped at, else from the last record FastWARC read
            begin, first = (cols.stop_pos, False) if cols.stop_pos is not None else (cols.last_pos, True)
            if begin is None:
                begin, first = seg.skip, False
            walker = Walker(rules, frame, *_from_unit(seg, units, begin))
            try:
                found = walker.walk(first, failed)
            finally:
                walker.close()
            damages += found.damages
            cols.settle(found.first_whole)
            if found.reject is not None:
                if cols.full(batch_rows):
                    yield cols.batch()
                cols.reject(found.reject)
            seg = found.resume
        if cols.rows():
            yield cols.batch()
        for at, message in sorted(damages, key=lambda d: d[0]):
            yield damaged_input_batch(shard, at, message)


def _from_unit(seg: Segment, units: Units | None, pos: int) -> tuple[Segment, int]:
    """Where the walker starts to read decoded position ``pos`` of the segment: at the start of the unit that
    holds it (not the segment's: re-inflating a whole file to check its tail doubled the read's time)."""
    if units is None:
        return Segment(seg.at + pos), 0
    starts, ats = units.starts()
    k = bisect_right(starts, pos) - 1
    return (Segment(ats[k], pos - starts[k]), pos - starts[k]) if k >= 0 else (seg, pos)


def _read_lz4(shard: Shard, cols: Columns, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """An lz4 WARC through FastWARC alone (no lz4 inflater here): damage ends the shard at the last record."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    frame, damage = Frame(), None
    with closing(_open(shard)) as raw:
        records = ArchiveIterator(raw, record_types=WarcRecordType.any_type, parse_http=False, auto_decode="none")
        try:
            yield from cols.fill(records, batch_rows, Segment(0), None, frame)
        except OSError as exc:
            damage = (frame.last or 0, f"unreadable WARC data after the record at byte {frame.last}: {exc}")
    if cols.stop_pos is not None:
        damage = (frame.last or 0, f"a record after the one at byte {frame.last} is cut short or has no length")
    if cols.rows():
        yield cols.batch()
    if damage is not None:
        yield damaged_input_batch(shard, *damage)


def _open(shard: Shard) -> Any:
    """The shard's bytes as a stream; a remote file streams in 8 MiB ranged requests, one fetched ahead."""
    if shard.start is None:
        return open_binary(shard.path, shard.size, _STREAM)
    return Window(shard.path, shard.start, shard.stop or shard.size, shard.size, _STREAM)


def _finish(
    path: str, struct: pa.StructArray, reasons: list[tuple[str, str | None] | None] | None, body: pa.Array
) -> pa.RecordBatch:
    """A batch of the Rust kernel (:mod:`mdf_text.io.warc_native`) in the reader's schema; ``reasons``: the rows
    the Python side rejected (a body that would not decode), where the kernel gave none."""
    n = len(struct)
    mime, charset = _split_content_types(struct)
    arrays = [
        struct.field("id"),
        struct.field("url"),
        dates(struct.field("date")),
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
    reason, detail = struct.field("reason"), struct.field("reason_detail")
    if reasons is not None:  # the kernel's reason first (a bad HTTP head), then the body's
        has = pc.is_valid(reason)
        reason = pc.if_else(has, reason, pa.array([r and r[0] for r in reasons], pa.string()))
        detail = pc.if_else(has, detail, pa.array([r and r[1] for r in reasons], pa.string()))
    if reason.null_count == n:
        return batch
    batch = batch.append_column(REASON, pc.binary_join_element_wise(_READER, reason, _COLON))
    return batch.append_column(REASON_DETAIL, detail)


def _split_content_types(struct: pa.StructArray) -> tuple[pa.Array, pa.Array]:
    """The kernel's split of Content-Type (``mime``, ``charset``: ASCII values only), the rows it left (a value
    outside ASCII) split by :func:`mdf_text.io.warc_columns.content_types`."""
    raw = struct.field("content_type")
    mime, charset = struct.field("mime"), struct.field("charset")
    ascii_ = pc.fill_null(pc.string_is_ascii(raw), True)
    if pc.all(ascii_).as_py() is not False:
        return mime, charset
    py_mime, py_charset = content_types(raw)
    return pc.if_else(ascii_, mime, py_mime), pc.if_else(ascii_, charset, py_charset)


def _mime_sets(mime_types: list[str] | None) -> tuple[frozenset[str] | None, tuple[str, ...]]:
    if mime_types is None:
        return None, ()
    exact = frozenset(m for m in mime_types if not m.endswith("/*"))
    return exact, tuple(m[:-1] for m in mime_types if m.endswith("/*"))
