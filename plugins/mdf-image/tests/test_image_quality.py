"""image_technical_quality_refiner and image_quality_filter on real photographs and degraded copies of them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from PIL import Image, ImageFilter
from pydantic import ValidationError

from mdf.errors import OperatorError
from mdf.metrics import REASON
from mdf.testing import check_operator_contract, run_operator
from mdf_image import testdata
from mdf_image.ops.metadata import ImageMetadataRefiner
from mdf_image.ops.quality import ImageQualityFilter, ImageTechnicalQualityRefiner
from mdf_image.testdata import to_batch

NAMES = ("astronaut", "coffee", "chelsea", "rocket", "camera")


def images_batch(blobs: dict[str, bytes]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"id": list(blobs), "image": pa.array(list(blobs.values()), pa.large_binary())})


def measure(blobs: dict[str, bytes], **params) -> dict[str, dict]:
    kept, rejected = run_operator(ImageTechnicalQualityRefiner(**params), images_batch(blobs))
    assert rejected is None
    return {r["id"]: r for r in kept.to_pylist()}


def grey_stats(img: Image.Image, max_side: int = 512) -> tuple[float, float, float]:
    """Mean, population std and histogram entropy (bits) of Pillow's grey conversion, after the box reduction
    that brings the longer side to at most ``max_side``: the refiner's definitions."""
    k = -(-max(img.size) // max_side)
    if k > 1:
        img = img.convert("RGB").reduce(k)
    g = np.asarray(img.convert("L"), np.float64)
    p = np.bincount(g.astype(np.int64).ravel(), minlength=256) / g.size
    p = p[p > 0]
    return g.mean(), g.std(), float(-(p * np.log2(p)).sum())


def test_brightness_contrast_entropy_match_a_numpy_reference_on_lossless_photos():
    imgs = {n: testdata.photo(n) for n in NAMES}
    m = measure({n: testdata.encode(img, "PNG") for n, img in imgs.items()})
    for n, img in imgs.items():
        mean, std, ent = grey_stats(img)
        assert m[n]["brightness"] == pytest.approx(mean, abs=1e-6)
        assert m[n]["contrast"] == pytest.approx(std, abs=1e-6)
        assert m[n]["entropy"] == pytest.approx(ent, abs=1e-6)
        assert 0 < m[n]["entropy"] <= 8


def test_blur_lowers_sharpness_and_flat_images_have_no_entropy():
    blobs = {}
    for n in NAMES:
        img = testdata.photo(n)
        blobs[n] = testdata.encode(img, quality=95)
        blobs[f"{n}/blur"] = testdata.encode(img.filter(ImageFilter.GaussianBlur(3)), quality=95)
    blobs["flat"] = testdata.encode(Image.new("RGB", (300, 200), (120, 130, 140)), quality=95)
    m = measure(blobs)
    for n in NAMES:
        assert m[f"{n}/blur"]["sharpness"] < 0.5 * m[n]["sharpness"], n
    assert m["flat"]["entropy"] < 0.5 and m["flat"]["sharpness"] < 1 and m["flat"]["contrast"] < 1
    assert min(m[n]["entropy"] for n in NAMES) > 4


def test_low_jpeg_quality_raises_blockiness_and_brightening_raises_brightness():
    blobs = {}
    for n in NAMES:
        img = testdata.photo(n)
        blobs[f"{n}/png"] = testdata.encode(img, "PNG")
        blobs[f"{n}/q5"] = testdata.encode(img, quality=5)
        blobs[f"{n}/bright"] = testdata.transformed(img, "brightness_up20")
        blobs[f"{n}/q90"] = testdata.transformed(img, "original")
    m = measure(blobs)
    for n in NAMES:
        assert m[f"{n}/q5"]["blockiness"] > m[f"{n}/png"]["blockiness"] + 0.2, n
        assert m[f"{n}/bright"]["brightness"] > m[f"{n}/q90"]["brightness"] + 5, n


def test_colorfulness_is_zero_for_grey_photos():
    m = measure({n: testdata.encode(testdata.photo(n), quality=95) for n in ("camera", "coffee", "astronaut")})
    assert m["camera"]["colorfulness"] < 1  # a grey photograph
    assert m["coffee"]["colorfulness"] > 20 and m["astronaut"]["colorfulness"] > 20


def test_max_side_reduces_before_measuring():
    blob = testdata.encode(testdata.photo("retina"), "PNG")  # 1411 x 1411
    full, small = measure({"r": blob}, max_side=2048)["r"], measure({"r": blob}, max_side=128)["r"]
    assert full["brightness"] == pytest.approx(small["brightness"], abs=1.5)  # a box filter keeps the mean
    assert small["sharpness"] != full["sharpness"]


def test_bad_inputs_rejected_with_reasons(bad):
    _, rejected = run_operator(ImageTechnicalQualityRefiner(), to_batch(bad))
    got = dict(zip(rejected.column("id").to_pylist(), rejected.column(REASON).to_pylist(), strict=True))
    expected = dict(zip(bad.column("id").to_pylist(), bad.column("expected_reason").to_pylist(), strict=True))
    assert set(got) == set(expected)  # the truncated JPEG too: quality decodes every pixel
    for key, reason in got.items():
        assert reason.startswith(f"image_technical_quality_refiner:{expected[key]}"), (key, reason)


@pytest.fixture(scope="module")
def measured(photos) -> pa.RecordBatch:
    batch, _ = run_operator(ImageMetadataRefiner(), to_batch(photos))
    batch, _ = run_operator(ImageTechnicalQualityRefiner(), batch)
    return batch


@pytest.mark.parametrize("rule", ["min_sharpness", "min_entropy", "max_blockiness", "min_width", "min_height"])
def test_filter_keeps_exactly_the_rows_meeting_a_threshold(measured, rule):
    column = rule.split("_", 1)[1]
    values = measured.column(column).to_numpy().astype(np.float64)
    limit = float(np.median(values))
    kept, rejected = run_operator(ImageQualityFilter(**{rule: limit}), measured)
    passes = values <= limit if rule.startswith("max_") else values >= limit
    assert kept.column("id").to_pylist() == [i for i, ok in zip(measured["id"].to_pylist(), passes, strict=True) if ok]
    word = "above_max" if rule.startswith("max_") else "below_min"
    assert set(rejected.column(REASON).to_pylist()) == {f"image_quality_filter:{column}_{word}"}


def test_filter_aspect_ratio_and_first_failing_rule_names_the_reason(measured):
    ratio = {
        r["id"]: max(r["width"], r["height"]) / min(r["width"], r["height"])
        for r in measured.select(["id", "width", "height"]).to_pylist()
    }
    f = ImageQualityFilter(max_aspect_ratio=1.4, min_width=300)
    kept, rejected = run_operator(f, measured)
    widths = dict(zip(measured["id"].to_pylist(), measured["width"].to_pylist(), strict=True))
    assert kept.column("id").to_pylist() == [i for i in ratio if ratio[i] <= 1.4 and widths[i] >= 300]
    for i, reason in zip(rejected["id"].to_pylist(), rejected[REASON].to_pylist(), strict=True):
        want = "width_below_min" if widths[i] < 300 else "aspect_ratio_above_max"
        assert reason == f"image_quality_filter:{want}", i


def test_filter_names_the_missing_refiner_and_needs_a_threshold(photos):
    batch, _ = run_operator(ImageMetadataRefiner(), to_batch(photos.slice(0, 4)))
    with pytest.raises(OperatorError, match="put image_technical_quality_refiner before"):
        run_operator(ImageQualityFilter(min_sharpness=10), batch)
    with pytest.raises(OperatorError, match=r"column 'width'.*image_metadata_refiner"):
        run_operator(ImageQualityFilter(min_width=10), to_batch(photos.slice(0, 4)))
    with pytest.raises(ValidationError, match="no threshold"):
        ImageQualityFilter()


def test_filter_null_measure_fails_its_rule(measured):
    batch = measured.set_column(
        measured.schema.get_field_index("sharpness"), "sharpness", pa.nulls(measured.num_rows, pa.float64())
    )
    kept, rejected = run_operator(ImageQualityFilter(min_sharpness=0), batch)
    assert kept.num_rows == 0 and pc.all(pc.equal(rejected[REASON], "image_quality_filter:sharpness_below_min"))


def test_contracts(mixed, measured):
    check_operator_contract(ImageTechnicalQualityRefiner(), to_batch(mixed), id_column="id")
    check_operator_contract(ImageQualityFilter(min_sharpness=50, max_aspect_ratio=1.6), measured, id_column="id")
