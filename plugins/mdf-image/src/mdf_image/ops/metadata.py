"""``image_metadata_refiner``: format, size, mode, EXIF orientation and byte count, read from headers only.

The kernel parses headers without decoding pixels, so this is the cheap first stage that lets a quality filter
drop small or odd-shaped images before anything pays for a full decode.
"""

from __future__ import annotations

from pydantic import Field

from mdf import Params
from mdf_image.ops.native import KernelRefiner

METADATA_COLUMNS = ("format", "width", "height", "mode", "orientation", "num_bytes")


class ImageMetadataRefiner(KernelRefiner):
    """Add format, width, height, mode, orientation and num_bytes from image headers; reject unreadable images."""

    name = "image_metadata_refiner"
    kernel_name = "image_metadata"
    columns = METADATA_COLUMNS

    class Params(Params):
        column: str = Field("image", description="binary column holding the encoded image")
        max_pixels: int | None = Field(
            None, gt=0, description="reject images whose header claims more pixels (none = mdf_kernels.MAX_PIXELS)"
        )
