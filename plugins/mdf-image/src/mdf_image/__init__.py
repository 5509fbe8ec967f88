"""mdf-image: image readers and image operators for mdf; decoding and metrics run in the native kernels.

The classes below are imported on first use, so that loading the ``image`` plugin (``mdf_image.plugin``, which
imports this package) for a run that uses no image operator imports none of their modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mdf import lazy_exports

_EXPORTS = {
    "ImageEmbeddingRefiner": "mdf_image.ops.embedding",
    "ImageFolderReader": "mdf_image.io.folder",
    "ImageMetadataRefiner": "mdf_image.ops.metadata",
    "ImagePhashRefiner": "mdf_image.ops.phash",
    "ImageQualityFilter": "mdf_image.ops.quality",
    "ImageTechnicalQualityRefiner": "mdf_image.ops.quality",
    "LaionParquetReader": "mdf_image.io.laion",
    "WebDatasetReader": "mdf_image.io.webdataset",
}

if TYPE_CHECKING:
    from mdf_image.io.folder import ImageFolderReader
    from mdf_image.io.laion import LaionParquetReader
    from mdf_image.io.webdataset import WebDatasetReader
    from mdf_image.ops.embedding import ImageEmbeddingRefiner
    from mdf_image.ops.metadata import ImageMetadataRefiner
    from mdf_image.ops.phash import ImagePhashRefiner
    from mdf_image.ops.quality import ImageQualityFilter, ImageTechnicalQualityRefiner


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "ImageEmbeddingRefiner",
    "ImageFolderReader",
    "ImageMetadataRefiner",
    "ImagePhashRefiner",
    "ImageQualityFilter",
    "ImageTechnicalQualityRefiner",
    "LaionParquetReader",
    "WebDatasetReader",
]
