"""Short decode-error classes for ``_reason``, the decoder's own text for ``_reason_detail``.

Decoders explain a broken file in their own words (``"Code length 2  more than bits left 1"``, ``Unknown filter
method 255.``, Pillow's ``image file is truncated (8 bytes not processed)``): as reasons those are thousands of
distinct strings that no metrics table can count. Every path that decodes (the native kernels' ``error`` field,
Pillow in :mod:`mdf_image.ops.decode`) says ``decode_error: <text>``; :func:`split_decode_errors` turns that
into ``decode_error:<class>`` and keeps ``<text>`` beside it. The classes come from the messages the decoders in
use (zune-jpeg, jpeg-decoder, png, image-webp, gif, Pillow) give for truncated and corrupted real photographs
(see tests/test_image_reasons.py); a message no rule knows is ``decode_error:corrupt_data``.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from mdf import REASON, REASON_DETAIL, lit

PREFIX = "decode_error: "

CLASSES: tuple[tuple[str, str], ...] = (
    ("decoder_panic", r"decoder panicked"),
    ("truncated", r"truncat|end of file|exhausted data|fill whole buffer|bits left|no more (bytes|data)|premature"),
    ("corrupt_deflate", r"deflate|zlib|adler"),
    ("corrupt_huffman", r"huffman"),
    ("corrupt_lzw", r"lzw"),
    ("corrupt_filter", r"filter method"),
    ("bad_marker", r"marker"),
    ("bad_checksum", r"crc|checksum"),
    ("unsupported_feature", r"unsupported|not supported|not implemented"),
    ("bad_header", r"header|signature|\bsof\b|ihdr|zero size|components|no frame|without|chunk|gif block"),
    ("corrupt_bitstream", r"bitstream|bit stream"),
)
"""``(class, regex)`` tried in order on the decoder's text (case-insensitive); the first match names the class."""


def split_decode_errors(errors: pa.Array) -> tuple[pa.Array, pa.Array | None]:
    """``(reasons, details)``: each ``decode_error: <text>`` becomes ``decode_error:<class>`` with ``<text>`` in
    ``details``; other reasons (``too_many_pixels``, ``empty``, null) pass unchanged with a null detail.
    ``details`` is None when no row has a decode error. Vectorised: the text of good rows is never looked at."""
    errors = errors.cast(pa.string())
    is_decode = pc.fill_null(pc.starts_with(errors, PREFIX), False)
    if not pc.any(is_decode).as_py():
        return errors, None
    text = pc.utf8_trim(pc.utf8_slice_codeunits(errors, len(PREFIX)), '"')
    matches = [pc.fill_null(pc.match_substring_regex(text, rx, ignore_case=True), False) for _, rx in CLASSES]
    classes = pc.case_when(
        pc.make_struct(*matches, field_names=[c for c, _ in CLASSES]),
        *(pa.scalar(f"decode_error:{c}") for c, _ in CLASSES),
        lit("decode_error:corrupt_data"),
    )
    null = pa.scalar(None, pa.string())
    return pc.if_else(is_decode, classes, errors), pc.if_else(is_decode, text, null)


def append_reasons(batch: pa.RecordBatch, errors: pa.Array) -> pa.RecordBatch:
    """``batch`` with ``_reason`` (short classes) from ``errors`` and, when a row failed to decode,
    ``_reason_detail`` (the decoder's text), which core moves to the rejected rows only."""
    reasons, details = split_decode_errors(errors)
    batch = batch.append_column(REASON, reasons)
    return batch if details is None else batch.append_column(REASON_DETAIL, details)
