"""Megatron-Core's own reader (``megatron.core.datasets.indexed_dataset.IndexedDataset``) returns every document mdf
wrote, uint16 and int32, split documents as their sequences.

``megatron-core`` imports torch, which PyPI ships for linux x86_64 only with its CUDA wheels (~3 GB), so this runs in
the ``embeddings`` nox session (the one with torch) and skips elsewhere; the other tests read the files with a
reader written from Megatron-Core's source (``token_helpers.read_megatron``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from mdf_tokens.megatron.writer import MegatronWriter
from mdf_tokens.schema import DTYPE_KEY, SEQUENCES

pytestmark = pytest.mark.embeddings  # the session with torch installs megatron-core beside it


@pytest.mark.parametrize("dtype, top", [("uint16", 65_000), ("int32", 200_000)])
def test_megatron_core_reads_every_document(tmp_path: Path, dtype: str, top: int):
    indexed = pytest.importorskip(
        "megatron.core.datasets.indexed_dataset", reason="megatron-core (and torch) not installed: nox -s embeddings"
    )
    rng = np.random.default_rng(0)
    docs = [rng.integers(0, top, size=int(n)).tolist() for n in rng.integers(0, 3000, size=500)]
    pieces = [[len(d)] if len(d) < 2048 else [2048, len(d) - 2048] for d in docs]
    field = pa.field("tokens", pa.list_(pa.uint32()), metadata={DTYPE_KEY: dtype.encode()})
    batch = pa.RecordBatch.from_arrays(
        [pa.array(docs, field.type), pa.array(pieces, pa.list_(pa.int32()))],
        schema=pa.schema([field, pa.field(SEQUENCES, pa.list_(pa.int32()))]),
    )
    w = MegatronWriter(path=str(tmp_path))
    w.write(batch.slice(0, 200), "part")
    w.write(batch.slice(200), "part")
    w.commit("part")
    ds = indexed.IndexedDataset(str(tmp_path / "part"))
    sequences = [s for d, p in zip(docs, pieces, strict=True) for s in (d[: p[0]], d[p[0] :])[: len(p)]]
    assert len(ds) == len(sequences)
    for i, want in enumerate(sequences):
        assert ds[i].tolist() == want
    assert ds.document_indices.tolist() == [0, *np.cumsum([len(p) for p in pieces]).tolist()]
    assert ds.sequence_lengths.tolist() == [len(s) for s in sequences]
    assert np.dtype(ds.index.dtype) == np.dtype(dtype)
