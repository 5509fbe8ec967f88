"""``image_near_dedup``: drop images whose perceptual hash is within ``max_hamming`` bits of an earlier one's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from pydantic import Field, model_validator

from mdf import KERNELS, NO_MATCH, Deduplicator, DedupParams, OperatorError, as_numpy
from mdf_image.state import NearIndexState, nearest


class ImageNearDedup(Deduplicator):
    """Drop images within max_hamming bits of an earlier image's hash (multi-index hashing, any hash column).

    Each 64-bit hash is split into ``max_hamming + 1`` blocks; two hashes within the distance agree on one
    block exactly (pigeonhole), so the blocks are keys into the key-state service, which returns the earlier
    rows sharing a block and keeps those within ``max_hamming`` bits (a popcount each). All ``hash_columns`` of
    all rows go into one index, so any hash of a row can match any hash of an earlier row: with ``phash`` and
    ``phash_crop`` (the pHash of the centre, 5 % cut off each side) and ``phash_flip`` (of the mirror image) from
    ``image_phash_refiner``, a resized or re-encoded copy meets the original's ``phash``, a cropped copy's
    ``phash`` meets its ``phash_crop`` and a mirrored copy's ``phash`` meets its ``phash_flip``.
    Streaming: the first image to arrive is kept, and every image is indexed, so a chain of small edits is
    removed as one group.
    ``cluster_column`` names a column that gets, for each row, the input position of the earliest image it
    matched (its own position when kept). Null hashes (undecodable images) never make a row a duplicate.
    """

    name = "image_near_dedup"
    reads = {"hash_columns": "integer"}
    requires = KERNELS
    reason = "near_duplicate"
    state_types = (NearIndexState,)

    class Params(DedupParams):
        hash_columns: list[str] = Field(
            ["phash", "phash_crop", "phash_flip"],
            min_length=1,
            description="uint64 hash columns (from image_phash_refiner)",
        )
        max_hamming: int = Field(6, ge=0, le=31, description="largest Hamming distance, in bits, of a near copy")

        @model_validator(mode="after")
        def _streaming_only(self) -> Any:
            if self.mode != "streaming":
                raise ValueError("image_near_dedup runs in mode: streaming only; remove mode: cluster")
            return self

    def _hashes(self, batch: pa.RecordBatch, column: str) -> pa.Array:
        if column not in batch.schema.names:
            raise OperatorError(
                f"image_near_dedup needs the hash column '{column}' (add image_phash_refiner before it, or set "
                f"hash_columns to columns the batch has: {batch.schema.names})"
            )
        col = batch.column(column)
        return (col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col).cast(pa.uint64())

    def matches(self, batch: pa.RecordBatch, rows: np.ndarray) -> np.ndarray:
        """Per row: the position of the earliest filed row with a hash within ``max_hamming`` bits of any of
        this row's hashes, or ``NO_MATCH``."""
        from mdf_kernels import mih_block_keys

        n, d, m = batch.num_rows, self.params.max_hamming, len(self.params.hash_columns)
        # one entry per (row, hash column), row-major, at position row * m + c: a row's hashes share one index,
        # so a copy's phash meets the original's phash_crop, but never match each other (stride m)
        cols = [self._hashes(batch, c) for c in self.params.hash_columns]
        valid = np.stack([as_numpy(c.is_valid()) for c in cols], axis=1).reshape(-1)
        values = np.stack([as_numpy(c.fill_null(0)) for c in cols], axis=1).reshape(-1)
        entries = (np.repeat(rows, m) * np.uint64(m) + np.tile(np.arange(m, dtype=np.uint64), n))[valid]
        match = np.full(n * m, NO_MATCH, dtype=np.uint64)
        if valid.any():
            hashes = pa.array(values[valid], pa.uint64())
            keys = as_numpy(mih_block_keys(hashes, d))
            found = nearest(self.state, self.namespace, keys, values[valid], entries, d, stride=m)
            match[valid] = np.where(found == NO_MATCH, NO_MATCH, found // np.uint64(m))
        return match.reshape(n, m).min(axis=1)
