"""Entry point ``image``: registers the image readers and operators."""

from __future__ import annotations

from mdf import Registry, hookimpl
from mdf_image.io.folder import ImageFolderReader
from mdf_image.io.laion import LaionParquetReader
from mdf_image.io.webdataset import WebDatasetReader
from mdf_image.ops.embedding import ImageEmbeddingRefiner
from mdf_image.ops.metadata import ImageMetadataRefiner
from mdf_image.ops.near_dedup import ImageNearDedup
from mdf_image.ops.phash import ImagePhashRefiner
from mdf_image.ops.quality import ImageQualityFilter, ImageTechnicalQualityRefiner
from mdf_image.state import NearIndexState


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add(ImageMetadataRefiner)
    registry.add(ImageTechnicalQualityRefiner)
    registry.add(ImageQualityFilter)
    registry.add(ImagePhashRefiner)
    registry.add(ImageNearDedup)
    registry.add(ImageEmbeddingRefiner)


@hookimpl
def mdf_register_state_types(registry: Registry) -> None:
    registry.add(NearIndexState)


@hookimpl
def mdf_register_readers(registry: Registry) -> None:
    registry.add(ImageFolderReader)
    registry.add(LaionParquetReader)
    registry.add(WebDatasetReader)
