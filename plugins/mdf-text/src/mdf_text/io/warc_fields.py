"""WARC and HTTP header blocks read the way FastWARC 2.0 (and the Rust kernel, ``rust/src/warc/header.rs``)
reads them, for the records the reader's recovery walker handles itself (:mod:`mdf_text.io.warc_walk`): lines
end at CRLF, a line starting with a space or tab continues the previous value, a line without a colon is
dropped, keys and values are trimmed, a lookup is case-insensitive and takes the first occurrence; the record's
type, HTTP flag and length come from the first ``WARC-Type``, ``Content-Type`` and ``Content-Length`` keys
spelled exactly so, the scan for them stopping after three matches.
"""

from __future__ import annotations

MAX_HEADER = 32 << 10  # FastWARC's max_header_len: a header block (with its blank line) longer is unreadable
TYPE_BITS = {
    b"warcinfo": 2,
    b"response": 4,
    b"resource": 8,
    b"request": 16,
    b"metadata": 32,
    b"revisit": 64,
    b"conversion": 128,
    b"continuation": 256,
}
UNKNOWN = 1 << 15
RESPONSE = 4
TYPE_NAMES = {bit: name.decode() for name, bit in TYPE_BITS.items()}
# windows-1252 as browsers (and encoding_rs) decode it: the five bytes cp1252 leaves undefined map to U+0081 etc.
_CP1252 = {b: bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in range(0x80, 0xA0)}

_SPACE = b" \t\n\x0c\r"  # what Rust's trim_ascii trims (no vertical tab)

Fields = list[tuple[bytes, bytes]]


def parse(lines: bytes) -> Fields:
    """The header lines of a block (after its first line), each ended by CRLF (the last one may lack it)."""
    items: Fields = []
    for line in lines.split(b"\r\n"):
        if not line:
            break
        if line[0] in b" \t":
            more = line.strip(_SPACE)
            if items:
                key, value = items[-1]
                items[-1] = (key, value + b" " + more)
            else:
                items.append((b"", more))
            continue
        key, colon, value = line.partition(b":")
        if colon:
            items.append((_trim(key), _trim(value)))
    return items


def _trim(b: bytes) -> bytes:
    return b.strip(_SPACE)


def get(items: Fields, key: str) -> bytes | None:
    want = key.encode().lower()
    for k, v in items:
        if k.lower() == want:
            return v
    return None


def record_kind(items: Fields) -> tuple[int, bool, int | None]:
    """``(type bit, is HTTP, Content-Length or None)`` by FastWARC's rule: ``None`` when no Content-Length, or
    one that is not a number."""
    kind, http, length, found = 0, False, None, 0
    for k, v in items:
        if k == b"WARC-Type":
            kind = next((bit for name, bit in TYPE_BITS.items() if v.lower() == name), UNKNOWN)
        elif k == b"Content-Type":
            http = v == b"application/http" or v.startswith(b"application/http;")
        elif k == b"Content-Length":
            length = _uint(v, (1 << 64) - 1)
        else:
            continue
        found += 1
        if found == 3:
            break
    return kind, http, length


def is_version_line(line: bytes) -> bool:
    line = line.rstrip(_SPACE)
    return line in (b"WARC/1.0", b"WARC/1.1") or (line.startswith(b"WARC/0.") and len(line) <= 9)


def http_head(block: bytes) -> tuple[int | None, Fields, int] | None:
    """``(status, fields, head length)`` of the HTTP head at the start of ``block``; ``None`` when it runs past
    :data:`MAX_HEADER`."""
    if block.startswith(b"\r\n"):
        return None, [], 2
    k = block.find(b"\r\n\r\n")
    head, size = (block[: k + 2], k + 4) if k >= 0 else (block, len(block))
    if size > MAX_HEADER:
        return None
    status_line, _, lines = head.partition(b"\r\n")
    return _status(status_line.strip(_SPACE)), parse(lines), size


def _status(line: bytes) -> int | None:
    if not line.startswith(b"HTTP/"):
        return None
    parts = line.split(b" ", 2)
    return _uint(parts[1], 0xFFFF) if len(parts) > 1 else None


def _uint(v: bytes, most: int) -> int | None:
    """``v`` as Rust's ``str::parse`` of an unsigned integer reads it (an optional ``+``, digits, no overflow)."""
    digits = v[1:] if v.startswith(b"+") else v
    if not digits or not digits.isdigit() or not digits.isascii():
        return None
    n = int(digits)
    return n if n <= most else None


def warc_text(v: bytes | None) -> str | None:
    return None if v is None else v.decode("utf-8", "replace")


def http_text(v: bytes | None) -> str | None:
    if v is None:
        return None
    if v.isascii():
        return v.decode("ascii")
    return "".join(_CP1252[b] if 0x80 <= b < 0xA0 else chr(b) for b in v)
