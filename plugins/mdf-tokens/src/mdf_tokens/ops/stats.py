"""Token counts of a batch into an operator's counters: what the run report's "Operator counters" section shows.

Counters are plain integers summed across workers (``OperatorMetrics.count``), so the figures are exact on every
executor and survive ``--resume``: ``tokens`` and ``documents``; ``tokens_by_source/<name>`` and
``documents_by_source/<name>`` when the batch names each row's source; ``doc_tokens/<=N``, the histogram of document
lengths in tokens (bins at powers of two: ``<=0``, ``<=1``, ``<=2``, ``<=4``, ... ``<=65536``, then ``>65536``).
The report divides ``tokens`` by the run's wall time for tokens/s. Computed with numpy and Arrow's group-by, never
a Python loop over rows.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from pydantic import Field

from mdf import Params, Refiner, as_numpy
from mdf_tokens.schema import N_TOKENS, SOURCE

TOP_BIN = 16  # 2**16 tokens: longer documents share the last bin
HISTOGRAM = "doc_tokens"
BY_SOURCE = "tokens_by_source"
DOCS_BY_SOURCE = "documents_by_source"


def bin_names() -> list[str]:
    return ["<=0", *(f"<={1 << k}" for k in range(TOP_BIN + 1)), f">{1 << TOP_BIN}"]


_BINS = bin_names()


def count_tokens(metrics: Any, counts: np.ndarray, sources: pa.Array | pa.ChunkedArray | None = None) -> None:
    """Add a batch's token counts (one per document) to ``metrics`` (an operator's ``OperatorMetrics``)."""
    counts = np.asarray(counts, dtype=np.int64)
    metrics.count("tokens", int(counts.sum()))
    metrics.count("documents", len(counts))
    # bin k holds n with n <= 2**(k-1) (bin 0: n == 0): the bit length of n - 1, plus one
    bins = np.where(counts > 0, _bit_length(np.maximum(counts - 1, 0)) + 1, 0)
    bins = np.minimum(bins, len(_BINS) - 1)
    for k, n in enumerate(np.bincount(bins, minlength=len(_BINS))):
        if n:
            metrics.count(f"{HISTOGRAM}/{_BINS[k]}", int(n))
    if sources is not None:
        table = pa.table({"s": sources, "n": pa.array(counts)}).group_by("s").aggregate([("n", "sum"), ("n", "count")])
        for name, tokens, docs in zip(
            table.column("s").to_pylist(), table.column("n_sum").to_pylist(), table.column("n_count").to_pylist(),
            strict=True,
        ):  # fmt: skip
            label = "(none)" if name is None else str(name)
            metrics.count(f"{BY_SOURCE}/{label}", int(tokens))
            metrics.count(f"{DOCS_BY_SOURCE}/{label}", int(docs))


def _bit_length(x: np.ndarray) -> np.ndarray:
    """``int(v).bit_length()`` of each non-negative value: the exponent ``frexp`` gives (exact below 2**53)."""
    return np.frexp(x.astype(np.float64))[1].astype(np.int64)


class TokenStats(Refiner):
    """Count tokens, tokens per source and a histogram of document lengths (for a run over token ids)."""

    name = "token_stats"
    reads = {"count_column": "integer"}
    writes: ClassVar[dict[str, str] | None] = {}
    cost_class = "cleaning"

    class Params(Params):
        count_column: str = Field(N_TOKENS, description="column of tokens per document")
        source_column: str | None = Field(
            SOURCE, description="column naming each document's source (counted per value); none: not counted"
        )

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        p = self.params
        src = p.source_column if p.source_column and p.source_column in batch.schema.names else None
        counts = as_numpy(batch.column(p.count_column).fill_null(0))
        count_tokens(self.metrics, counts, batch.column(src) if src else None)
        return batch
