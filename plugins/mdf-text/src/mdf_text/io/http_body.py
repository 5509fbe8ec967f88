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
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable

from fastwarc.stream_io import BrotliReader, ChunkedReader, GzipReader, ZstdReader

_IDENTITY = frozenset({"", "identity", "none"})


def _gzip(data: bytes) -> bytes:
    out: bytes = GzipReader(io.BytesIO(data)).read()
    return out


def _deflate(data: bytes) -> bytes:
    """RFC 9110 ``deflate`` is zlib-wrapped; some servers send raw deflate, as browsers also accept."""
    try:
        out: bytes = GzipReader(io.BytesIO(data), zlib=True).read()
        return out
    except OSError:
        try:
            return zlib.decompressobj(-zlib.MAX_WBITS).decompress(data)
        except zlib.error as exc:
            raise OSError(str(exc)) from exc


def _brotli(data: bytes) -> bytes:
    out: bytes = BrotliReader(io.BytesIO(data)).read()
    return out


def _zstd(data: bytes) -> bytes:
    out: bytes = ZstdReader(io.BytesIO(data)).read()
    return out


_DECODERS: dict[str, Callable[[bytes], bytes]] = {
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


def decode_content(body: bytes, encoding: str) -> tuple[bytes, str | None]:
    """Decode ``body`` per the ``Content-Encoding`` header value; return ``(body, reason or None)``."""
    codings = [c.strip().lower() for c in encoding.split(",")]
    for coding in reversed(codings):
        if coding in _IDENTITY:
            continue
        decoder = _DECODERS.get(coding)
        if decoder is None:
            return body, f"unsupported_content_encoding: {coding[:40]}"
        try:
            body = decoder(body)
        except OSError as exc:
            if _looks_decoded(body, coding):
                return body, None  # the crawler decoded it and kept the header
            return body, f"bad_content_encoding: {coding}: {str(exc)[:120]}"
    return body, None


def _looks_decoded(body: bytes, coding: str) -> bool:
    if not body:
        return True
    if coding in ("gzip", "x-gzip"):
        return not body.startswith(b"\x1f\x8b")
    head = body[:64].lstrip(b" \t\r\n\xef\xbb\xbf")  # a BOM or whitespace before markup
    return head[:1] in (b"<", b"{", b"[")
