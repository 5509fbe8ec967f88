"""Entry point ``image``: registers the image readers and operators.

Everything is registered by reference (``registry.add_lazy``), so loading the plugin imports none of its
modules (NumPy, Pillow, the kernels): a run imports only the readers and operators its recipe names.
"""

from __future__ import annotations

from mdf import Registry, hookimpl


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add_lazy("image_metadata_refiner", "mdf_image.ops.metadata:ImageMetadataRefiner")
    registry.add_lazy("image_technical_quality_refiner", "mdf_image.ops.quality:ImageTechnicalQualityRefiner")
    registry.add_lazy("image_quality_filter", "mdf_image.ops.quality:ImageQualityFilter")
    registry.add_lazy("image_phash_refiner", "mdf_image.ops.phash:ImagePhashRefiner")
    registry.add_lazy("image_near_dedup", "mdf_image.ops.near_dedup:ImageNearDedup")
    registry.add_lazy("image_embedding_refiner", "mdf_image.ops.embedding:ImageEmbeddingRefiner")


@hookimpl
def mdf_register_state_types(registry: Registry) -> None:
    registry.add_lazy("hamming_near_index", "mdf_image.state:NearIndexState")


@hookimpl
def mdf_register_readers(registry: Registry) -> None:
    registry.add_lazy("image_folder", "mdf_image.io.folder:ImageFolderReader")
    registry.add_lazy("laion_parquet", "mdf_image.io.laion:LaionParquetReader")
    registry.add_lazy("webdataset", "mdf_image.io.webdataset:WebDatasetReader")
