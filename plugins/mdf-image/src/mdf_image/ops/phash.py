"""``image_phash_refiner``: 64-bit perceptual hashes for near-duplicate detection.

``phash`` is imagehash's DCT pHash, ``dhash`` the gradient hash, ``phash_crop`` the pHash of a centre crop:
crops move every pixel of a whole-image hash, so a second hash of the centre is what lets the near-duplicate
stage find cropped copies. ``phash_flip`` is the pHash of the mirrored image, which a left-right flipped copy's
``phash`` matches. All are ``uint64`` so the dedup stage compares them with one popcount.
"""

from __future__ import annotations

from pydantic import Field

from mdf import Params
from mdf_image.ops.native import KernelRefiner

HASH_COLUMNS = ("phash", "dhash", "phash_crop", "phash_flip")


class ImagePhashRefiner(KernelRefiner):
    """Add 64-bit phash, dhash, phash_crop and phash_flip (uint64) of each image; reject undecodable images."""

    name = "image_phash_refiner"
    kernel_name = "image_hashes"
    columns = HASH_COLUMNS

    class Params(Params):
        column: str = Field("image", description="binary column holding the encoded image")
        max_pixels: int | None = Field(
            None, gt=0, description="reject images with more pixels than this (none = mdf_kernels.MAX_PIXELS)"
        )
