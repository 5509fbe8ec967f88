"""image_metadata_refiner on real photographs in every format, against what Pillow reads from the same bytes."""

from __future__ import annotations

import io

import pyarrow as pa
import pytest
from PIL import Image

from mdf.errors import OperatorError
from mdf.metrics import REASON
from mdf.testing import check_operator_contract, run_operator
from mdf_image.ops.metadata import ImageMetadataRefiner
from mdf_image.testdata import to_batch


def test_metadata_matches_pillow_on_every_format(variants):
    kept, rejected = run_operator(ImageMetadataRefiner(), to_batch(variants.select(["id", "image"])))
    assert rejected is None
    expected = variants.select(["format", "mode", "width", "height", "orientation"]).to_pylist()
    got = kept.select(["format", "mode", "width", "height", "orientation"]).to_pylist()
    assert got == expected
    assert kept.column("num_bytes").to_pylist() == [len(b) for b in variants.column("image").to_pylist()]
    assert kept.schema.field("width").type == pa.uint32() and kept.schema.field("num_bytes").type == pa.uint64()


def test_metadata_of_photos_and_their_copies(photos):
    kept, rejected = run_operator(ImageMetadataRefiner(), to_batch(photos))
    assert rejected is None and kept.num_rows == photos.num_rows
    for row, blob in zip(kept.to_pylist(), photos.column("image").to_pylist(), strict=True):
        img = Image.open(io.BytesIO(blob))
        assert (row["width"], row["height"], row["mode"]) == (img.width, img.height, img.mode), row["id"]
    sizes = {r["id"]: (r["width"], r["height"]) for r in kept.to_pylist()}
    assert sizes["astronaut/resize_half"] == (256, 256) and sizes["astronaut/original"] == (512, 512)


def test_bad_inputs_are_rejected_with_the_kernel_reason(bad):
    kept, rejected = run_operator(ImageMetadataRefiner(), to_batch(bad))
    reasons = dict(zip(rejected.column("id").to_pylist(), rejected.column(REASON).to_pylist(), strict=True))
    expected = dict(zip(bad.column("id").to_pylist(), bad.column("expected_reason").to_pylist(), strict=True))
    # a header-only read cannot see that a JPEG was cut after its header: quality and phash reject it
    assert kept.column("id").to_pylist() == ["bad/truncated_jpeg"]
    del expected["bad/truncated_jpeg"]
    assert set(reasons) == set(expected)
    for key, reason in reasons.items():
        assert reason.startswith(f"image_metadata_refiner:{expected[key]}"), (key, reason)


def test_max_pixels_is_a_parameter(photos):
    batch = to_batch(photos.slice(0, 6))  # astronaut 512 x 512 and its copies
    kept, rejected = run_operator(ImageMetadataRefiner(max_pixels=300 * 300), batch)
    assert kept.column("id").to_pylist() == ["astronaut/resize_half"]
    assert set(rejected.column(REASON).to_pylist()) == {"image_metadata_refiner:too_many_pixels"}


def test_null_image_is_rejected_and_wrong_column_is_named(make_batch):
    batch = pa.RecordBatch.from_pydict({"id": ["a"], "image": pa.array([None], pa.large_binary())})
    _, rejected = run_operator(ImageMetadataRefiner(), batch)
    assert rejected.column(REASON).to_pylist() == ["image_metadata_refiner:null_image"]
    with pytest.raises(OperatorError, match="no column 'img'"):
        run_operator(ImageMetadataRefiner(column="img"), batch)
    with pytest.raises(OperatorError, match="not binary"):
        run_operator(ImageMetadataRefiner(column="id"), batch)


def test_existing_columns_are_replaced_not_duplicated(variants):
    batch = to_batch(variants)  # already has format/width/height/mode/orientation columns (int64, from Pillow)
    kept, _ = run_operator(ImageMetadataRefiner(), batch)
    assert kept.schema.names[: batch.num_columns] == batch.schema.names
    assert kept.schema.field("width").type == pa.uint32()  # the kernel's values, in the original position


def test_contract(mixed):
    check_operator_contract(ImageMetadataRefiner(), to_batch(mixed), id_column="id")
