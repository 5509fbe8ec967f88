"""Undo HTTP transfer and content encodings of a WARC response payload, with FastWARC's own decoders.

The WARC reader reads payloads raw (``auto_decode="none"``) so it can compare their length with the record's
Content-Length and spot a truncated record; this module then decodes the few payloads that need it. Decoding
follows what browsers and warcio do with real crawls:

* ``Transfer-Encoding: chunked`` is undone; a body that is not actually chunked (a crawler that de-chunked
  but kept the header) is kept as it is.
* ``Content-Encoding`` (gzip, x-gzip, deflate, br, zstd; several, applied in reverse order) is decoded. A
  crawler that already decoded the body says so by renaming the header (CommonCrawl writes
  ``X-Crawler-Content-Encoding``), so only a plain ``Content-Encoding`` triggers decoding. A body that still
  carries the header but plainly is not encoded (no gzip/zlib magic, or markup where a compressed stream
  should start) is kept as it is; a body that claims an encoding and cannot be decoded is returned with a
  reason so the reader rejects that one row instead of passing on garbage.
* A truncated encoded body (crawlers cut bodies at a size limit, ``WARC-Truncated``) yields what decodes.
* A body that decodes past ``limit`` bytes (the reader's ``max_record_bytes``: a gzip bomb inflates 1,000 to 1)
  is not decoded further: the row is rejected, ``record_too_large``, its body empty, and memory stays bounded.

Reasons are short and countable (``bad_content_encoding``); what went wrong is the detail beside them.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable

from fastwarc.stream_io import BrotliReader, ChunkedReader, GzipReader, ZstdReader

_IDENTITY = frozenset({"", "identity", "none"})


def _gzip(data: bytes, most: int) -> bytes:
    out: bytes = GzipReader(io.BytesIO(data)).read(most)
    return out


def _deflate(data: bytes, most: int) -> bytes:
    """RFC 9110 ``deflate`` is zlib-wrapped; some servers send raw deflate, as browsers also accept."""
    try:
        out: bytes = GzipReader(io.BytesIO(data), zlib=True).read(most)
        return out
    except OSError:
        try:
            return zlib.decompressobj(-zlib.MAX_WBITS).decompress(data, most)
        except zlib.error as exc:
            raise OSError(str(exc)) from exc


def _brotli(data: bytes, most: int) -> bytes:
    out: bytes = BrotliReader(io.BytesIO(data)).read(most)
    return out


def _zstd(data: bytes, most: int) -> bytes:
    out: bytes = ZstdReader(io.BytesIO(data)).read(most)
    return out


_DECODERS: dict[str, Callable[[bytes, int], bytes]] = {
    "gzip": _gzip,
    "x-gzip": _gzip,
    "deflate": _deflate,
    "br": _brotli,
    "zstd": _zstd,
}


def dechunk(body: bytes) -> bytes:
    """Undo chunked transfer encoding; a body that does not parse as chunked is returned unchanged."""
    try:
        out: bytes = ChunkedReader(io.BytesIO(body)).read()
    except OSError:
        return body
    return out


def decode_content(body: bytes, encoding: str, limit: int) -> tuple[bytes, str | None, str | None]:
    """Decode ``body`` per the ``Content-Encoding`` header value, to at most ``limit`` bytes; return ``(body,
    reason or None, detail or None)``."""
    codings = [c.strip().lower() for c in encoding.split(",")]
    for coding in reversed(codings):
        if coding in _IDENTITY:
            continue
        decoder = _DECODERS.get(coding)
        if decoder is None:
            return body, "unsupported_content_encoding", coding[:40]
        try:
            decoded = decoder(body, limit + 1)
        except OSError as exc:
            if _looks_decoded(body, coding):
                return body, None, None  # the crawler decoded it and kept the header
            return body, "bad_content_encoding", f"{coding}: {str(exc)[:120]}"
        if len(decoded) > limit:
            return b"", "record_too_large", f"the body decodes ({coding}) past max_record_bytes ({limit})"
        body = decoded
    return body, None, None


def _looks_decoded(body: bytes, coding: str) -> bool:
    if not body:
        return True
    if coding in ("gzip", "x-gzip"):
        return not body.startswith(b"\x1f\x8b")
    head = body[:64].lstrip(b" \t\r\n\xef\xbb\xbf")  # a BOM or whitespace before markup
    return head[:1] in (b"<", b"{", b"[")
