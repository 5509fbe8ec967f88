"""``image_metadata_refiner``: format, size, mode, EXIF orientation and byte count, read from headers only.

The kernel parses headers without decoding pixels, so this is the cheap first stage that lets a quality filter
drop small or odd-shaped images before anything pays for a full decode.
"""

from __future__ import annotations

import pyarrow as pa
from pydantic import Field

from mdf import Params, Refiner
from mdf_image.ops.native import KERNELS, image_column, kernel, refine_with

METADATA_COLUMNS = ("format", "width", "height", "mode", "orientation", "num_bytes")


class ImageMetadataRefiner(Refiner):
    """Add format, width, height, mode, orientation and num_bytes from image headers; reject unreadable images."""

    name = "image_metadata_refiner"
    requires = KERNELS

    class Params(Params):
        column: str = Field("image", description="binary column holding the encoded image")
        max_pixels: int | None = Field(
            None, gt=0, description="reject images whose header claims more pixels (none = mdf_kernels.MAX_PIXELS)"
        )

    def setup(self) -> None:
        self._kernel = kernel("image_metadata")

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        blobs = image_column(batch, self.params.column, self.name)
        result = self._kernel(blobs, max_pixels=self.params.max_pixels)
        return refine_with(batch, blobs, result, METADATA_COLUMNS)
