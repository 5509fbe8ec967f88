"""The ``warc`` reader on the Rust kernel ``mdf_kernels.WarcScanner``: same rows, same damage, 1.3-1.9x faster.

Why a kernel: with FastWARC from Python, inflating and parsing cost as much as FastWARC's own loop, and moving
each record's fields into column lists, plus inflating here to know each record's gzip member, cost as much
again (``benchmarks/bench_warc_read.py``: 0.36-0.57x a bare FastWARC loop). The kernel inflates the members,
parses the WARC and HTTP headers as FastWARC 2.0 does and writes the Arrow columns directly. A local file on
a local disk is memory-mapped and scanned in place by the kernel; another local file is read by the kernel;
Python reads a remote file's bytes (through :mod:`mdf.storage`, so S3 and https read as local files do).
Python finishes each batch with vectorised pyarrow calls, and undoes the rare transfer and content encodings
with the same decoders as the FastWARC path (:mod:`mdf_text.io.http_body`), so both paths give the same rows.

The kernel sees every byte of the shard, so it proves the tail whole itself and reports each damaged part
where the FastWARC path's recovery walker does (:mod:`mdf_text.io.warc_walk`, the same rules): the offset of
the record, or of its gzip member, and why; a record it rejects carries its reason (``bad_http``, ...) in the
batch, prefixed ``reader:`` here.

Used when the installed ``mdf-kernels`` has ``WarcScanner`` and the file is gzip members or a plain WARC;
the FastWARC path stays for an install without the kernels, for zstd files (inflated in Python) and lz4 ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import closing
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from mdf import Shard, damaged_input_batch, has_native_kernel
from mdf.storage import is_remote

_CHUNK = 4 << 20  # bytes read per feed: the kernel's work per call dwarfs the Python call
# Bytes of a local file read through Python: its codec's magic bytes. The kernel maps or reads the file itself;
# a 4 MiB head cost a fresh 4 MiB bytes object and a second copy into the kernel (~1.3 ms of a 14 ms read of a
# 42 MB file), and on the mapped path any head is read for nothing but the codec.
_HEAD = 8
# Body bytes per batch (at most; fewer when the reader's own limit is lower). Why 16 MiB and not the FastWARC
# path's 256 MiB: a batch's body buffer goes back to the kernel's pool when the pipeline drops the batch
# (mdf_kernels recycle.rs), and the pool keeps buffers of up to 40 MiB; a bigger one would be fresh mmap pages,
# faulted in and zeroed on every batch. Measured on a plain 42 MB CommonCrawl file, 1,024-row batches (~32 MB
# of bodies), before the pool: 0.035 CPU s at 256 MiB, 0.011-0.030 at 16 MiB (a bare FastWARC loop: 0.012-0.017).
_BATCH_BYTES = 16 << 20
_MAP = True  # map local files on a local disk (the kernel's `map_file`); tests turn it off to test `feed_file`


def available() -> bool:
    return has_native_kernel("WarcScanner")


def _local(path: str) -> bool:
    return not is_remote(path)


Finish = Callable[[pa.StructArray, list[tuple[str, str | None] | None] | None, pa.Array], pa.RecordBatch]


def read(
    shard: Shard,
    raw: Any,
    gz: bool,
    wanted: int,
    mime: tuple[frozenset[str] | None, tuple[str, ...]],
    batch_rows: int,
    max_batch_bytes: int,
    max_record_bytes: int,
    finish: Finish,
) -> Iterator[pa.RecordBatch]:
    """Batches of ``shard`` (a plain or gzip WARC) read from the open stream ``raw`` (closed when done), then one
    damaged-input row per damaged part. ``finish(struct, reasons, body)`` turns a kernel batch into the
    reader's schema."""
    try:
        first = raw.read(_HEAD if _local(shard.path) else _CHUNK)
    except BaseException:
        raw.close()
        raise
    return _batches(shard, raw, first, gz, wanted, mime, batch_rows, max_batch_bytes, max_record_bytes, finish)


def _batches(
    shard: Shard,
    raw: Any,
    first: bytes,
    gz: bool,
    wanted: int,
    mime: tuple[frozenset[str] | None, tuple[str, ...]],
    batch_rows: int,
    max_batch_bytes: int,
    max_record_bytes: int,
    finish: Finish,
) -> Iterator[pa.RecordBatch]:
    from mdf_kernels import WarcScanner

    exact, prefixes = mime
    start = shard.start or 0
    exact_list = sorted(exact) if exact is not None else None
    limit = min(max_batch_bytes, _BATCH_BYTES)
    scanner = WarcScanner(gz, start, wanted, exact_list, list(prefixes), batch_rows, limit, max_record_bytes)
    with closing(raw):
        local, stop = _local(shard.path), shard.stop or shard.size
        if local and _MAP and scanner.map_file(shard.path, start, stop):  # scanned in place, on a local disk
            raw.close()
            while not scanner.done:
                for struct in scanner.advance(_CHUNK):
                    yield _decoded(struct, finish, max_record_bytes)
        elif local:  # the kernel reads the file itself: no copy through a Python bytes object
            pos = start + len(first)
            structs = scanner.feed(first, not first or pos >= stop)
            raw.close()
            while True:
                for struct in structs:
                    yield _decoded(struct, finish, max_record_bytes)
                if scanner.done:
                    break
                size = min(_CHUNK, stop - pos)
                structs, got = scanner.feed_file(shard.path, pos, size, pos + size >= stop)
                pos += got
        else:  # a stream of mdf.storage (s3://, https://), read one chunk ahead to know the last
            data = first
            while not scanner.done:
                more = raw.read(_CHUNK) if data else b""
                for struct in scanner.feed(data, not more):
                    yield _decoded(struct, finish, max_record_bytes)
                data = more
    for at, message in scanner.damages:
        yield damaged_input_batch(shard, at, message)


def _decoded(struct: pa.StructArray, finish: Finish, limit: int) -> pa.RecordBatch:
    """Undo ``Transfer-Encoding: chunked`` and ``Content-Encoding`` where a row has them (rare: CommonCrawl
    stores bodies decoded); a body that cannot be decoded (or decodes past ``limit``) is kept and its row
    rejected with the reason."""
    body = struct.field("body")
    chunked, encoding = struct.field("chunked"), struct.field("content_encoding")
    if not pc.any(chunked).as_py() and encoding.null_count == len(encoding):
        return finish(struct, None, body)
    from mdf_text.io.http_body import dechunk, decode_content

    bodies: list[bytes] = body.to_pylist()
    reasons: list[tuple[str, str | None] | None] = [None] * len(bodies)
    for i, (is_chunked, coding) in enumerate(zip(chunked.to_pylist(), encoding.to_pylist(), strict=True)):
        if is_chunked:
            bodies[i] = dechunk(bodies[i])
        if coding:
            bodies[i], why, detail = decode_content(bodies[i], coding, limit)
            reasons[i] = None if why is None else (why, detail)
    return finish(struct, reasons if any(reasons) else None, pa.array(bodies, pa.binary()))
