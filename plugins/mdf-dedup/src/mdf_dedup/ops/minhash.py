"""``minhash_dedup``: near-duplicate removal with MinHash signatures and LSH banding (mdf_kernels)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pyarrow as pa
from pydantic import Field, model_validator

from mdf import KERNELS, Deduplicator
from mdf_dedup.index.client import IndexedDedup, IndexParams
from mdf_dedup.index.state import IndexState
from mdf_dedup.state import BandOwners, Signatures


class MinHashDedup(IndexedDedup, Deduplicator):
    """Drop rows whose text shares an LSH band with an earlier row (estimated Jaccard near ``threshold``).

    Each row gets a MinHash signature of its ``ngram`` shingles (``mdf_kernels.minhash``: NFC, lowercased,
    punctuation removed) and ``bands`` keys, one per band of ``rows`` signature values. A row whose band key an
    earlier row claimed is a duplicate: streaming mode keeps the first row to arrive, cluster mode closes the
    band collisions transitively and keeps the first row in input order of each cluster. Without explicit
    ``bands``/``rows`` they are chosen for ``threshold`` as datasketch's MinHashLSH does (equal weights of
    false positives and negatives), printed in the run report's parameters.
    """

    name = "minhash_dedup"
    reads = {"column": "string", "index_source": "any"}
    requires = KERNELS
    state_types = (BandOwners, Signatures, IndexState)

    class Params(IndexParams):
        column: str = Field("text", description="text column")
        num_perm: int = Field(128, ge=8, le=1024, description="signature length (hash functions)")
        ngram: int = Field(5, ge=1, le=64, description="shingle size, in tokens")
        tokenizer: Literal["word", "char"] = Field("word", description="word shingles or character shingles")
        threshold: float = Field(0.8, gt=0, lt=1, description="Jaccard similarity that counts as a duplicate")
        bands: int | None = Field(None, ge=1, description="LSH bands; with rows, overrides threshold's choice")
        rows: int | None = Field(None, ge=1, description="signature values per band; set together with bands")
        seed: int = Field(1, ge=0, description="seed of the hash functions (same seed = comparable signatures)")
        verify: bool = Field(
            False,
            description="streaming: check a band collision against the signature of the row that first had the band "
            "(its low 8 bits per value, num_perm bytes a row in the key state) and keep the row when their estimated "
            "Jaccard is below threshold; more precision for two extra round trips a batch",
        )

        @model_validator(mode="after")
        def _bands_rows(self) -> MinHashDedup.Params:
            if (self.bands is None) != (self.rows is None):
                raise ValueError("set both bands and rows, or neither (then threshold picks them)")
            if self.verify and self.mode != "streaming":
                raise ValueError("verify works in mode: streaming; remove verify or mode: cluster")
            if self.bands is not None and self.rows is not None and self.bands * self.rows > self.num_perm:
                raise ValueError(
                    f"bands*rows = {self.bands}*{self.rows} exceeds num_perm={self.num_perm}; lower them or "
                    "leave both unset"
                )
            return self

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        p = self.params
        if p.bands is not None and p.rows is not None:
            self.bands, self.rows = p.bands, p.rows
        else:
            from mdf_kernels import optimal_bands_rows

            self.bands, self.rows = optimal_bands_rows(p.threshold, p.num_perm)

    def index_settings(self) -> dict[str, object]:
        """What decides a band key: the column, the signature (num_perm, shingles, seed) and the banding."""
        p = self.params
        return {"column": p.column, "num_perm": p.num_perm, "ngram": p.ngram, "tokenizer": p.tokenizer, "seed": p.seed,
                "bands": self.bands, "rows": self.rows}  # fmt: skip

    def signatures(self, batch: pa.RecordBatch) -> pa.FixedSizeListArray:
        from mdf_kernels import minhash

        p = self.params
        return minhash(batch.column(p.column), num_perm=p.num_perm, ngram=p.ngram, tokenizer=p.tokenizer, seed=p.seed)

    def keys(self, batch: pa.RecordBatch) -> pa.Array:
        from mdf_kernels import lsh_band_keys

        return lsh_band_keys(self.signatures(batch), self.bands, self.rows)

    def claims_keys(self) -> bool:
        """Without ``verify`` the band keys are claimed: signatures and band keys are then made before the
        batch's turn in the inline executor (:meth:`mdf.Deduplicator.prepare`), on every core."""
        return not self.params.verify

    def matches(self, batch: pa.RecordBatch, rows: np.ndarray) -> np.ndarray | None:
        """With ``verify``: band collisions confirmed by the signatures (:mod:`mdf_dedup.ops.verify`); without
        it, ``None``: the base class claims the band keys."""
        if not self.params.verify:
            return None
        from mdf_dedup.ops.verify import verified_matches

        return verified_matches(self, batch, rows)
