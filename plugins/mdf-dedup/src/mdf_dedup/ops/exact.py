"""``exact_dedup``: one row per distinct value of a column, optionally after text normalisation."""

from __future__ import annotations

from typing import Literal

import pyarrow as pa
from pydantic import Field, model_validator

from mdf import KERNELS, Deduplicator
from mdf_dedup.index.client import IndexedDedup, IndexParams
from mdf_dedup.index.state import IndexState

BLOOM_RATE = 0.001  # Dolma's default false-positive rate


class ExactDedup(IndexedDedup, Deduplicator):
    """Keep one row per distinct (normalised) value of a column; the key is its 64-bit xxh3 hash.

    Streaming mode keeps the first row to arrive with each key, cluster mode the first in input order (see
    :mod:`mdf.deduplicator`). With 64-bit keys, two different values collide with probability ~n^2/2^65
    (about 3e-6 for 10 M distinct values): a collision drops a row that was not a duplicate. With ``index``
    the keys earlier runs kept reject rows too (:mod:`mdf_dedup.index`), 8 bytes a key on disk; with
    ``index_kind: bloom``, Bloom filters of them (:mod:`mdf_dedup.index.bloom`).
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
        index_kind: Literal["exact", "bloom"] = Field(
            "exact", description="exact: the index holds every key (8 bytes a key on disk, memory-mapped while a run "
            "reads it plus under a byte a key of directory; 16 in memory when it has several generations) and each "
            "key's source id; bloom: Bloom filters of the keys (1.44*log2(1/false_positive_rate) bits a key: 1.8 "
            "bytes at 0.001), no source ids, and a new row taken for an earlier one at about false_positive_rate per "
            "generation",
        )  # fmt: skip
        false_positive_rate: float | None = Field(
            None, gt=0, le=0.1, description="index_kind: bloom: chance a key no earlier run kept is taken for one, "
            "per generation (default 0.001)",
        )  # fmt: skip

        @model_validator(mode="after")
        def _bloom(self) -> ExactDedup.Params:
            if self.index_kind == "exact" and self.false_positive_rate is not None:
                raise ValueError("false_positive_rate is for index_kind: bloom; remove it or set index_kind: bloom")
            if self.index_kind == "bloom" and self.index is None:
                raise ValueError("index_kind: bloom needs index: PATH (where the filters are kept)")
            if self.index_kind == "bloom" and self.index_source is not None:
                raise ValueError("a bloom index keeps no source ids; remove index_source or use index_kind: exact")
            return self

    def keys(self, batch: pa.RecordBatch) -> pa.Array:
        from mdf_kernels import hash64

        mode = None if self.params.normalize == "none" else self.params.normalize
        return hash64(batch.column(self.params.column), normalize=mode)

    def index_settings(self) -> dict[str, object]:
        """What decides a key: the column (keys of texts and keys of URLs never match), the hash (xxh3-64 of the
        value) and the normalisation; for a Bloom index also the kind and the rate its filters are sized for (an
        index of one kind is refused by a run of the other)."""
        p = self.params
        settings: dict[str, object] = {"column": p.column, "hash": "xxh3_64", "normalize": p.normalize}
        if p.index_kind == "bloom":
            settings.update(index_kind="bloom", false_positive_rate=p.false_positive_rate or BLOOM_RATE)
        return settings
