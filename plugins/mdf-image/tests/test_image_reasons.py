"""Decode failures as short reason classes, with the decoder's own text in ``_reason_detail``.

Real photographs cut short or with bytes overwritten go through the native path (a kernel refiner) and the
Pillow path (:func:`decode_rgb`, used by the embedding refiner); the class table is checked on the messages
those decoders gave for such files.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from mdf import REASON, REASON_DETAIL
from mdf.testing import run_operator
from mdf_image.ops.decode import decode_rgb
from mdf_image.ops.quality import ImageTechnicalQualityRefiner
from mdf_image.ops.reasons import split_decode_errors
from mdf_image.testdata import encode, photo

# what zune-jpeg, jpeg-decoder, png, image-webp, gif and Pillow said about real cut or corrupted photographs
MESSAGES = {
    'decode_error: "Code length 2  more than bits left 1"': "truncated",
    "decode_error: Exhausted data in the image": "truncated",
    "decode_error: unexpected end of file": "truncated",
    "decode_error: Unexpected End of File": "truncated",
    "decode_error: IO Error: failed to fill whole buffer": "truncated",
    "decode_error: image file is truncated (8 bytes not processed)": "truncated",
    "decode_error: truncated header": "truncated",
    'decode_error: "Bad Huffman Code 0xFF9F, corrupt JPEG"': "corrupt_huffman",
    "decode_error: Error decoding huffman values: Bad Huffman Table": "corrupt_huffman",
    "decode_error: Corrupt deflate stream. BadCodeLengthHuffmanTree": "corrupt_deflate",
    "decode_error: invalid code in LZW stream": "corrupt_lzw",
    "decode_error: Unknown filter method 255.": "corrupt_filter",
    'decode_error: "Unknown marker in bit stream"': "bad_marker",
    "decode_error: no SOF marker before SOS": "bad_marker",
    "decode_error: PNG without IHDR": "bad_header",
    "decode_error: Corrupt bitstream": "corrupt_bitstream",
    "decode_error: decoder panicked: index out of bounds": "decoder_panic",
    "decode_error: broken data stream when reading image file": "corrupt_data",
}


def test_each_decoder_message_gets_its_class_and_keeps_its_text():
    errors = pa.array([*MESSAGES, None, "too_many_pixels", "empty"], pa.string())
    reasons, details = split_decode_errors(errors)
    want = [f"decode_error:{c}" for c in MESSAGES.values()] + [None, "too_many_pixels", "empty"]
    assert reasons.to_pylist() == want
    texts = [m.removeprefix("decode_error: ").strip('"') for m in MESSAGES]
    assert details.to_pylist() == [*texts, None, None, None]


def test_no_decode_error_means_no_detail_column():
    reasons, details = split_decode_errors(pa.array([None, "empty"], pa.string()))
    assert reasons.to_pylist() == [None, "empty"] and details is None


@pytest.fixture(scope="module")
def broken() -> pa.RecordBatch:
    """Every format cut at 30 % and 70 %, and with 20 bytes overwritten, next to an intact photograph."""
    rng = random.Random(7)
    rows = [("good", encode(photo("camera")))]
    img = photo("astronaut")
    for fmt in ("JPEG", "PNG", "WEBP", "GIF"):
        blob = encode(img.convert("P") if fmt == "GIF" else img, fmt)
        rows += [(f"{fmt}/cut{int(f * 100)}", blob[: int(len(blob) * f)]) for f in (0.3, 0.7)]
        for k in range(3):
            b = bytearray(blob)
            for _ in range(20):
                b[rng.randrange(100, len(b))] = rng.randrange(256)
            rows.append((f"{fmt}/flip{k}", bytes(b)))
    return pa.record_batch(
        [pa.array([r[0] for r in rows]), pa.array([r[1] for r in rows], pa.large_binary())], names=["id", "image"]
    )


def test_kernel_refiner_rejects_with_classes_and_details(broken):
    kept, rejected = run_operator(ImageTechnicalQualityRefiner(), broken)
    assert REASON_DETAIL not in kept.schema.names and "good" in kept.column("id").to_pylist()
    rows = {r["id"]: r for r in rejected.to_pylist()}
    for fmt in ("JPEG", "PNG", "GIF"):  # WebP cut short reports a corrupt bitstream: its decoder cannot tell
        for cut in (30, 70):
            assert rows[f"{fmt}/cut{cut}"][REASON] == "image_technical_quality_refiner:decode_error:truncated"
    classes = {r[REASON].split(":", 1)[1] for r in rows.values()}
    assert len(classes) <= 6 and all(c.startswith("decode_error:") for c in classes), classes
    for r in rows.values():
        assert r[REASON_DETAIL] and not r[REASON_DETAIL].startswith("decode_error"), r


def test_pillow_path_gives_the_same_classes(broken):
    _, errors = decode_rgb(broken.column("image"), max_pixels=10**9)
    reasons, _ = split_decode_errors(pa.array(errors, pa.string()))
    by_id = dict(zip(broken.column("id").to_pylist(), reasons.to_pylist(), strict=True))
    assert by_id["good"] is None
    assert by_id["JPEG/cut30"] == by_id["PNG/cut70"] == "decode_error:truncated"
    assert all(r is None or r.startswith("decode_error:") for r in by_id.values())
