"""Technical image quality: a refiner that measures it and a filter that applies thresholds to the measures.

Measuring and deciding are separate operators so the measures land in the output (thresholds get tuned on
them later) and one decode serves every rule. The metrics are computed by the kernel on the image scaled so
its longer side is at most ``max_side`` pixels, which keeps the cost per image flat; sharpness and blockiness
therefore depend on ``max_side``, and a threshold tuned at one value holds only at that value.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, model_validator

from mdf import Filter, OperatorError, Params, lit
from mdf_image.ops.native import KernelRefiner

QUALITY_COLUMNS = ("sharpness", "entropy", "brightness", "contrast", "colorfulness", "blockiness")


class ImageTechnicalQualityRefiner(KernelRefiner):
    """Add sharpness, entropy, brightness, contrast, colorfulness and blockiness; reject undecodable images."""

    name = "image_technical_quality_refiner"
    kernel_name = "image_quality"
    columns = QUALITY_COLUMNS

    class Params(Params):
        column: str = Field("image", description="binary column holding the encoded image")
        max_side: int = Field(
            512, ge=32, description="pixels: images are scaled so their longer side is at most this before measuring"
        )
        max_pixels: int | None = Field(
            None, gt=0, description="reject images with more pixels than this (none = mdf_kernels.MAX_PIXELS)"
        )

    def kernel_args(self) -> dict[str, Any]:
        return {"max_side": self.params.max_side, "max_pixels": self.params.max_pixels}


class _Rule(NamedTuple):
    param: str
    column: str
    refiner: str
    reason: str


_METADATA = "image_metadata_refiner"
_QUALITY = "image_technical_quality_refiner"
# in the order they are checked: a row failing several rules is rejected with the first one's reason
_RULES = (
    _Rule("min_width", "width", _METADATA, "width_below_min"),
    _Rule("min_height", "height", _METADATA, "height_below_min"),
    _Rule("max_aspect_ratio", "width", _METADATA, "aspect_ratio_above_max"),
    _Rule("min_sharpness", "sharpness", _QUALITY, "sharpness_below_min"),
    _Rule("min_entropy", "entropy", _QUALITY, "entropy_below_min"),
    _Rule("max_blockiness", "blockiness", _QUALITY, "blockiness_above_max"),
)


class ImageQualityFilter(Filter):
    """Keep images meeting every threshold given (size, aspect ratio, sharpness, entropy, blockiness)."""

    name = "image_quality_filter"
    fusable = True  # decides each row from that row alone

    class Params(Params):
        min_width: int | None = Field(None, ge=0, description="pixels: narrowest width kept")
        min_height: int | None = Field(None, ge=0, description="pixels: lowest height kept")
        max_aspect_ratio: float | None = Field(
            None, ge=1.0, description="longer side / shorter side, largest kept (2.0 drops panoramas beyond 2:1)"
        )
        min_sharpness: float | None = Field(
            None, ge=0, description="variance of the Laplacian (grey levels squared), smallest kept; drops blur"
        )
        min_entropy: float | None = Field(
            None, ge=0, description="bits (0..8) of the grey histogram, smallest kept; drops flat and blank images"
        )
        max_blockiness: float | None = Field(
            None, ge=0, description="JPEG 8x8 block-edge score of the refiner, largest kept; drops heavy artefacts"
        )

        @model_validator(mode="after")
        def _some_rule(self) -> ImageQualityFilter.Params:
            if all(getattr(self, r.param) is None for r in _RULES):
                raise ValueError(f"no threshold given; set at least one of {', '.join(r.param for r in _RULES)}")
            return self

    def setup(self) -> None:
        self._rules = [r for r in _RULES if getattr(self.params, r.param) is not None]

    def keep(self, batch: pa.RecordBatch) -> tuple[pa.BooleanArray, pa.Array]:
        n = batch.num_rows
        reason = pa.nulls(n, pa.string())
        for rule in reversed(self._rules):  # the first failing rule (in _RULES order) writes the reason last
            fails = pc.fill_null(self._fails(batch, rule), True)  # a missing measure cannot pass a threshold
            reason = pc.if_else(fails, pa.scalar(rule.reason), reason)
        return pc.is_null(reason), reason

    def _fails(self, batch: pa.RecordBatch, rule: _Rule) -> pa.BooleanArray:
        limit = getattr(self.params, rule.param)
        if rule.param == "max_aspect_ratio":
            w = self._column(batch, rule, "width").cast(pa.float64())
            h = self._column(batch, rule, "height").cast(pa.float64())
            # a zero side gives an infinite ratio, which fails any limit (the floats never raise on / 0)
            ratio = pc.divide(pc.max_element_wise(w, h), pc.min_element_wise(w, h))
            return pc.greater(ratio, lit(limit))
        values = self._column(batch, rule, rule.column)
        return pc.greater(values, lit(limit)) if rule.param.startswith("max_") else pc.less(values, lit(limit))

    def _column(self, batch: pa.RecordBatch, rule: _Rule, column: str) -> pa.Array:
        idx = batch.schema.get_field_index(column)
        if idx < 0:
            raise OperatorError(
                f"image_quality_filter: {rule.param} reads column '{column}', which the batch lacks "
                f"(it has {batch.schema.names}); put {rule.refiner} before this filter"
            )
        return batch.column(idx)
