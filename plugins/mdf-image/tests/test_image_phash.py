"""image_phash_refiner on real photographs: imagehash's definitions, near-duplicates close, distinct images far."""

from __future__ import annotations

import io

import imagehash
import numpy as np
import pyarrow as pa
from PIL import Image

from mdf.metrics import REASON
from mdf.testing import check_operator_contract, run_operator
from mdf_image.ops.phash import ImagePhashRefiner
from mdf_image.testdata import to_batch


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def test_hash_columns_are_uint64_and_agree_with_imagehash(photos):
    kept, rejected = run_operator(ImagePhashRefiner(), to_batch(photos))
    assert rejected is None
    for col in ("phash", "dhash", "phash_crop"):
        assert kept.schema.field(col).type == pa.uint64()
    blobs = photos.column("image").to_pylist()
    ref_p = [int(str(imagehash.phash(Image.open(io.BytesIO(b)))), 16) for b in blobs]
    ref_d = [int(str(imagehash.dhash(Image.open(io.BytesIO(b)))), 16) for b in blobs]
    dp = np.array([hamming(a, b) for a, b in zip(kept["phash"].to_pylist(), ref_p, strict=True)])
    dd = np.array([hamming(a, b) for a, b in zip(kept["dhash"].to_pylist(), ref_d, strict=True)])
    assert (dp <= 2).mean() >= 0.95, f"phash off imagehash by {sorted(dp.tolist())[-10:]} bits"
    assert (dd <= 4).mean() >= 0.90, f"dhash off imagehash by {sorted(dd.tolist())[-10:]} bits"


def test_near_duplicates_are_close_and_distinct_images_far(photos):
    kept, _ = run_operator(ImagePhashRefiner(), to_batch(photos))
    rows = kept.select(["id", "group", "transform", "phash", "phash_crop"]).to_pylist()
    original = {r["group"]: r for r in rows if r["transform"] == "original"}
    for r in rows:
        if r["transform"] in ("resize_half", "jpeg_q30", "brightness_up20"):
            assert hamming(r["phash"], original[r["group"]]["phash"]) <= 10, r["id"]
        if r["transform"] == "crop_5pct":  # the crop's whole-image hash meets the original's centre hash
            o = original[r["group"]]
            assert hamming(r["phash"], o["phash_crop"]) <= hamming(r["phash"], o["phash"]), r["id"]
    distinct = [r for r in rows if r["transform"] in ("original", "tile", "photo")]
    gaps = [hamming(a["phash"], b["phash"]) for i, a in enumerate(distinct) for b in distinct[i + 1 :]]
    assert min(gaps) > 10


def test_bad_inputs_rejected_with_reasons(bad):
    _, rejected = run_operator(ImagePhashRefiner(), to_batch(bad))
    got = dict(zip(rejected.column("id").to_pylist(), rejected.column(REASON).to_pylist(), strict=True))
    expected = dict(zip(bad.column("id").to_pylist(), bad.column("expected_reason").to_pylist(), strict=True))
    assert set(got) == set(expected)
    for key, reason in got.items():
        assert reason.startswith(f"image_phash_refiner:{expected[key]}"), (key, reason)


def test_contract(mixed):
    check_operator_contract(ImagePhashRefiner(), to_batch(mixed), id_column="id")
