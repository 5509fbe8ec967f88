"""The generator's ground truth holds by an independent measure (imagehash), and its bad inputs are bad for Pillow
too: the tests and the near-dedup benchmarks that build on this data would be meaningless otherwise."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import zlib
from collections import Counter

import imagehash
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from PIL import Image

from mdf_image import testdata


def test_groups_are_originals_with_every_transform(photos):
    groups = Counter(photos.column("group").to_pylist())
    per_group = 1 + len(testdata.TRANSFORMS)
    assert [groups[g] for g in range(len(testdata.ORIGINALS))] == [per_group] * len(testdata.ORIGINALS)
    negatives = photos.filter(pc.is_in(photos["transform"], pa.array(["tile", "photo"])))
    assert negatives.num_rows >= 36  # "dozens" of distinct images
    assert len(set(negatives["group"].to_pylist())) == negatives.num_rows  # each in a group of its own


def test_distinct_images_are_far_apart_by_imagehash(photos):
    rows = [r for r in photos.to_pylist() if r["transform"] in ("original", "tile", "photo")]
    hashes = [imagehash.phash(Image.open(io.BytesIO(r["image"]))) for r in rows]
    closest = min(hashes[i] - hashes[j] for i in range(len(rows)) for j in range(i + 1, len(rows)))
    assert closest >= 12, closest
    resized = [r for r in photos.to_pylist() if r["transform"] == "resize_half"]
    for r in resized:
        src = next(x for x in rows if x["group"] == r["group"])
        assert imagehash.phash(Image.open(io.BytesIO(r["image"]))) - hashes[rows.index(src)] <= 4


def test_transforms_do_what_they_say():
    img = testdata.photo("coffee")  # 600 x 400
    sizes = {t: Image.open(io.BytesIO(testdata.transformed(img, t))).size for t in ("resize_half", "crop_5pct")}
    assert sizes == {"resize_half": (300, 200), "crop_5pct": (540, 360)}
    assert len(testdata.transformed(img, "jpeg_q30")) < 0.5 * len(testdata.transformed(img, "original"))


def test_huge_png_header_is_well_formed():
    data = testdata.huge_png(100_000, 100_000)
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    (crc,) = struct.unpack(">I", data[29:33])
    assert crc == zlib.crc32(data[12:29])
    Image.MAX_IMAGE_PIXELS, before = None, Image.MAX_IMAGE_PIXELS
    try:
        assert Image.open(io.BytesIO(data)).size == (100_000, 100_000)  # Pillow parses the header as is
    finally:
        Image.MAX_IMAGE_PIXELS = before


def test_bad_inputs_are_bad_for_pillow_too(bad):
    for key, blob in zip(bad["id"].to_pylist(), bad["image"].to_pylist(), strict=True):
        if key in ("bad/bmp", "bad/tiff"):
            assert Image.open(io.BytesIO(blob)).format in ("BMP", "TIFF")  # real images, unsupported formats
            continue
        with pytest.raises((OSError, Image.DecompressionBombError)):
            Image.open(io.BytesIO(blob)).load()


def test_cli_writes_every_format(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mdf_image.testdata", str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    n = testdata.example_set().num_rows
    assert pq.read_table(tmp_path / "laion").num_rows == n
    assert sum(1 for p in (tmp_path / "folder").rglob("*") if p.is_file()) == n
    assert len(list((tmp_path / "webdataset").glob("*.tar"))) == -(-n // 32)
