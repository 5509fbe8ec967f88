"""Write WARC files for the tests with warcio (an independent writer, so the reader is not tested against itself)."""

from __future__ import annotations

import gzip
import io
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from mdf import REASON, REASON_DETAIL, Reader


@dataclass
class Capture:
    url: str
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=lambda: [("Content-Type", "text/html; charset=utf-8")])
    status: str = "200 OK"
    record_type: str = "response"


def record_bytes(capture: Capture, date: str = "2024-03-05T10:00:00Z") -> bytes:
    """One uncompressed WARC record (warcio computes the block length and digests); the id follows the URL."""
    rid = f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, capture.record_type + capture.url)}>"
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False)
    if capture.record_type in ("response", "request"):
        http = StatusAndHeaders(capture.status, capture.headers, protocol="HTTP/1.1")
        rec = writer.create_warc_record(
            capture.url,
            capture.record_type,
            payload=io.BytesIO(capture.body),
            http_headers=http,
            warc_headers_dict={"WARC-Date": date, "WARC-Record-ID": rid},
        )
    else:
        ctype = dict(capture.headers).get("Content-Type", "text/plain")
        rec = writer.create_warc_record(
            capture.url,
            capture.record_type,
            payload=io.BytesIO(capture.body),
            warc_content_type=ctype,
            warc_headers_dict={"WARC-Date": date, "WARC-Record-ID": rid},
        )
    writer.write_record(rec)
    return out.getvalue()


def write_warc(path: Path, captures: list[Capture], members: str = "record") -> list[int]:
    """Write ``captures``; ``members``: ``record`` (a gzip member each), ``one`` (all in one member), ``pairs``
    (two records per member) or ``none`` (uncompressed). Returns the byte offset where each record's member (or
    the record itself, uncompressed) starts."""
    raw = [record_bytes(c) for c in captures]
    starts: list[int] = []
    with open(path, "wb") as f:
        if members == "none":
            for r in raw:
                starts.append(f.tell())
                f.write(r)
        elif members == "record":
            for r in raw:
                starts.append(f.tell())
                f.write(gzip.compress(r, mtime=0))
        elif members == "one":
            starts = [0] * len(raw)
            f.write(gzip.compress(b"".join(raw), mtime=0))
        elif members == "pairs":
            for i in range(0, len(raw), 2):
                starts += [f.tell()] * len(raw[i : i + 2])
                f.write(gzip.compress(b"".join(raw[i : i + 2]), mtime=0))
        else:
            raise ValueError(members)
    return starts


def read_all(reader: Reader, batch_rows: int = 1000) -> tuple[pa.Table | None, list[pa.RecordBatch]]:
    """Every shard of ``reader``: the good rows as one table (None if none) and the rejected batches."""
    good: list[pa.RecordBatch] = []
    bad: list[pa.RecordBatch] = []
    for shard in reader.shards():
        for batch in read_shard(reader, shard, batch_rows):
            if "_raw" in batch.schema.names:
                bad.append(batch)
            elif REASON in batch.schema.names:
                good.append(batch.drop_columns([n for n in (REASON, REASON_DETAIL) if n in batch.schema.names]))
                bad.append(batch)
            else:
                good.append(batch)
    return (pa.Table.from_batches(good) if good else None), bad


def read_shard(reader: Reader, shard: object, batch_rows: int = 1000) -> Iterator[pa.RecordBatch]:
    yield from reader.read(shard, batch_rows)  # type: ignore[arg-type]


def chunked(body: bytes, size: int = 700) -> bytes:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


def page(i: int, words: int = 200) -> bytes:
    text = " ".join(f"word{i}x{j}" for j in range(words))
    return f"<html><head><title>page {i}</title></head><body><p>{text}</p></body></html>".encode()


def crawl(n: int) -> list[bytes]:
    """``n`` pages, one WARC record each, at ``http://d.example/<i>``."""
    return [record_bytes(Capture(f"http://d.example/{i}", page(i))) for i in range(n)]


def members(records: list[bytes]) -> list[bytes]:
    """Each record as its own gzip member, as CommonCrawl writes them."""
    return [gzip.compress(r, mtime=0) for r in records]


def warc_record(block: bytes, url: str = "http://d.example/odd", extra: bytes = b"") -> bytes:
    """A response record around ``block`` written by hand: warcio would repair the odd blocks the tests need."""
    head = (
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: " + url.encode() + b"\r\nWARC-Record-ID: <urn:x:"
        + url.encode() + b">\r\nWARC-Date: 2024-03-05T10:00:00Z\r\n" + extra
        + b"Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n" % len(block)
    )  # fmt: skip
    return head + block + b"\r\n\r\n"
