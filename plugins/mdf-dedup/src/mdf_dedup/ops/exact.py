"""``exact_dedup``: one row per distinct value of a column, optionally after text normalisation."""

from __future__ import annotations

from typing import Literal

import pyarrow as pa
from pydantic import Field

from mdf import KERNELS, Deduplicator
from mdf_dedup.index.client import IndexedDedup, IndexParams
from mdf_dedup.index.state import IndexState


class ExactDedup(IndexedDedup, Deduplicator):
    """Keep one row per distinct (normalised) value of a column; the key is its 64-bit xxh3 hash.

    Streaming mode keeps the first row to arrive with each key, cluster mode the first in input order (see
    :mod:`mdf.deduplicator`). With 64-bit keys, two different values collide with probability ~n^2/2^65
    (about 3e-6 for 10 M distinct values): a collision drops a row that was not a duplicate. With ``index``
    the keys earlier runs kept reject rows too (:mod:`mdf_dedup.index`), 8 bytes a key on disk.
    """

    name = "exact_dedup"
    reads = {"column": "string|binary", "index_source": "any"}
    requires = KERNELS
    state_types = (IndexState,)

    class Params(IndexParams):
        column: str = Field("text", description="column whose value defines a duplicate (string or binary)")
        normalize: Literal["none", "lower", "nfc_ws", "alnum"] = Field(
            "none",
            description="text normalisation before hashing: none; lower (lowercase); nfc_ws (NFC, whitespace "
            "collapsed, lowercase); alnum (as nfc_ws, and punctuation and symbols removed)",
        )

    def keys(self, batch: pa.RecordBatch) -> pa.Array:
        from mdf_kernels import hash64

        mode = None if self.params.normalize == "none" else self.params.normalize
        return hash64(batch.column(self.params.column), normalize=mode)

    def index_settings(self) -> dict[str, object]:
        """What decides a key: the hash (xxh3-64 of the value) and the normalisation."""
        return {"hash": "xxh3_64", "normalize": self.params.normalize}
