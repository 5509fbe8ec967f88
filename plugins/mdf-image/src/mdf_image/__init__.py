"""mdf-image: image readers and image operators for mdf; decoding and metrics run in the native kernels."""

from mdf_image.io.folder import ImageFolderReader
from mdf_image.io.laion import LaionParquetReader
from mdf_image.io.webdataset import WebDatasetReader
from mdf_image.ops.embedding import ImageEmbeddingRefiner
from mdf_image.ops.metadata import ImageMetadataRefiner
from mdf_image.ops.phash import ImagePhashRefiner
from mdf_image.ops.quality import ImageQualityFilter, ImageTechnicalQualityRefiner

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
