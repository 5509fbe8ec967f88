"""``megatron`` reader: Megatron indexed datasets (``.idx`` + ``.bin``) as rows of token ids, one source or a weighted
mix of several, to a total token budget, shuffled inside a bounded window with a seed.

``paths:`` reads one source as it is (every document once, in file order, one shard per file). ``sources:`` mixes:
``[{paths: [...], weight: 0.7, name: web}, ...]`` with ``max_tokens`` (the total), ``seed``, ``shuffle_window`` and
``shards`` (output part files). The plan (:mod:`mdf_tokens.megatron.mix`) is made from the ``.idx`` files before any
work, so the budget means the same on every executor: each output shard has a token quota per source, computed
from the listing alone; inline threads and Ray actors run shards with exactly those quotas, and the part files are
the same byte for byte. A source smaller than its share is repeated (epochs, each in a new order); the plan is
logged per source.

Rows: ``tokens`` (``list<uint32>``, metadata ``mdf.token_dtype``: the widest dtype of the files read), ``n_tokens``,
``source`` (the source's name), and ``sequence_lengths`` when a file has documents of several sequences (so the
``megatron`` writer writes them back as they were).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, model_validator

from mdf import InputError, Params, Reader, RecipeError, Shard, expand_paths, shard_ids
from mdf_tokens.megatron.files import MegatronFile
from mdf_tokens.megatron.format import FormatError
from mdf_tokens.megatron.mix import ShardPlan, Source, apportion, budgets, shard_plan, slices
from mdf_tokens.schema import DTYPE_KEY, N_TOKENS, SEQUENCES, SOURCE, TOKENS

LOG = logging.getLogger("mdf.megatron")
SHARD_TOKENS = 100_000_000  # shards: auto -> one output shard per this many tokens of budget (at least 8)
DEFAULT_WINDOW = 10_000


class SourceSpec(BaseModel):
    """One source of a mix."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    paths: list[str] = Field(min_length=1, description=".idx files, folders or globs of Megatron datasets")
    weight: float = Field(1.0, gt=0, description="share of the budget, in tokens (weights are normalised)")
    name: str | None = Field(None, description="name in the source column and the report (default: source<i>)")


class MegatronReader(Reader):
    """Megatron .idx/.bin datasets as rows of token ids; several weighted sources mixed to a token budget."""

    name = "megatron"
    modality = "text"

    class Params(Params):
        paths: list[str] | None = Field(None, min_length=1, description="one source, read as it is")
        sources: list[SourceSpec] | None = Field(None, min_length=1, description="weighted sources to mix")
        max_tokens: int | None = Field(
            None, gt=0, description="mix: total tokens (default: the most the weights allow without repeats)"
        )
        seed: int = Field(0, description="mix: seed of the shuffle (same seed, same files: same output)")
        shuffle_window: int | None = Field(
            None, ge=0, description="mix: documents shuffled within windows of this many (default 10,000; 0: none)"
        )
        shards: int | Literal["auto"] = Field("auto", description="mix: output shards (auto: 1 per 100 M tokens, >= 8)")

        @model_validator(mode="after")
        def _one_way(self) -> MegatronReader.Params:
            if (self.paths is None) == (self.sources is None):
                raise ValueError("give either paths (one source) or sources (a mix), not both or neither")
            if self.sources is not None:
                names = [s.name or f"source{i}" for i, s in enumerate(self.sources)]
                if len(set(names)) != len(names):
                    raise ValueError(f"sources have the same name twice ({names}); name each source once")
            if isinstance(self.shards, int) and self.shards < 1:
                raise ValueError(f"shards must be >= 1 or auto, got {self.shards}")
            return self

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._sources: list[Source] | None = None
        self._quotas: list[list[int]] | None = None
        self._count = 0

    # -- planning ----------------------------------------------------------------------------------------------
    def sources(self) -> list[Source]:
        """The sources with their files (headers read), listed once per reader."""
        if self._sources is None:
            specs = self.params.sources or [SourceSpec(paths=self.params.paths or [])]
            where = "reader.sources[{}].paths" if self.params.sources else "reader.paths"
            out = []
            for i, spec in enumerate(specs):
                files = []
                for idx in expand_paths(spec.paths, where.format(i), extensions=(".idx",)):
                    try:
                        files.append(MegatronFile.open(idx))
                    except FormatError as exc:
                        raise InputError(f"{exc}; fix or remove it") from None
                out.append(Source(spec.name or f"source{i}", spec.weight, files))
            self._sources = out
        return self._sources

    @property
    def mixing(self) -> bool:
        return self.params.sources is not None

    def shards(self) -> list[Shard]:
        sources = self.sources()
        if not self.mixing:
            files = sources[0].files
            ids = shard_ids([f.idx[:-4] for f in files])  # named after the prefix, as Megatron names a dataset
            return [Shard(sid, f.idx, f.bin_size, rows=f.documents) for sid, f in zip(ids, files, strict=True)]
        n = self.shard_count()
        quotas = self.quotas()
        out = []
        width = max((f.dtype.itemsize for s in sources for f in s.files), default=4)
        for k in range(n):
            first = next((s.files[0].idx for s in sources if s.files), "")
            rows = sum(_estimate_docs(s, q[k], n, k) for s, q in zip(sources, quotas, strict=True))
            size = sum(q[k] for q in quotas) * width  # the bytes of .bin it reads (for the batch-size planner)
            out.append(Shard(f"mix-{k:05d}", first, size, start=k, stop=k + 1, rows=rows))
        for s, q in zip(sources, quotas, strict=True):
            budget = sum(q)
            LOG.info(
                "megatron mix: source %s: %d tokens of %d (%.3f epochs) in %d file(s)",
                s.name, budget, s.tokens, budget / s.tokens if s.tokens else 0.0, len(s.files),
            )  # fmt: skip
        return out

    def input_files(self, shards: list[Shard]) -> list[str]:
        """Every file the mix reads (both files of each pair): fingerprinted and kept apart from the outputs."""
        return [p for s in self.sources() for f in s.files for p in (f.idx, f.bin)]

    def shard_count(self) -> int:
        if isinstance(self.params.shards, int):
            return self.params.shards
        total = sum(budgets(self.sources(), self.params.max_tokens))
        return max(8, math.ceil(total / SHARD_TOKENS))

    def quotas(self) -> list[list[int]]:
        """``quotas[s][k]``: tokens shard ``k`` takes from source ``s``."""
        if self._quotas is None:
            sources, n = self.sources(), self.shard_count()
            empty = [s.name for s in sources if s.tokens == 0]
            if empty:
                raise RecipeError(
                    f"source {empty[0]!r} has no tokens (no file, or empty files); give it data", "reader.sources"
                )
            out = []
            for s, budget in zip(sources, budgets(sources, self.params.max_tokens), strict=True):
                out.append(apportion(budget, [float(_slice_tokens(s, a, b)) for a, b in slices(s, n)]))
            self._quotas = out
        return self._quotas

    def window(self) -> int:
        w = self.params.shuffle_window
        return (DEFAULT_WINDOW if self.mixing else 0) if w is None else w

    # -- reading -----------------------------------------------------------------------------------------------
    def schema(self, shards: list[Shard]) -> pa.Schema:
        files = [f for s in self.sources() for f in s.files]
        dtype = max((f.dtype for f in files), key=lambda d: d.itemsize, default=np.dtype(np.int32))
        fields = [
            pa.field(TOKENS, pa.list_(pa.uint32()), metadata={DTYPE_KEY: dtype.name.encode()}),
            pa.field(N_TOKENS, pa.int64()),
            pa.field(SOURCE, pa.string()),
        ]
        if any(f.sequences != f.documents for f in files):
            fields.append(pa.field(SEQUENCES, pa.list_(pa.int32())))
        return pa.schema(fields)

    def read(self, shard: Shard, batch_rows: int) -> Iterator[pa.RecordBatch]:
        schema, quotas = self.schema([]), self.quotas() if self.mixing else []
        # this shard's own copies of the files: what it loads (indexes, maps) goes when it ends
        sources = [Source(s.name, s.weight, [f.fresh() for f in s.files]) for s in self.sources()]
        if self.mixing:
            k, seed = int(shard.start or 0), self.params.seed
            plan = shard_plan(sources, quotas, self.shard_count(), k, self.window(), seed)
        else:
            f = next(f for f in sources[0].files if f.idx == shard.path)
            plan = ShardPlan(
                np.zeros(f.documents, np.int16), np.full(f.documents, sources[0].files.index(f), np.int32),
                np.arange(f.documents, dtype=np.int64), f.doc_tokens,
            )  # fmt: skip
        names = pa.array([s.name for s in sources], pa.string())
        try:
            for at in range(0, len(plan.doc), max(batch_rows, 1)):
                yield _batch(sources, plan, at, at + batch_rows, names, schema)
        finally:
            for s in sources:
                for f in s.files:
                    f.close()


def _batch(
    sources: list[Source], plan: ShardPlan, lo: int, hi: int, names: pa.Array, schema: pa.Schema
) -> pa.RecordBatch:  # fmt: skip
    """Rows ``lo..hi`` of a shard's plan, their tokens read file by file."""
    src, fil, doc = plan.source[lo:hi], plan.file[lo:hi], plan.doc[lo:hi]
    tokens: list[Any] = [None] * len(doc)
    seqs: list[Any] = [None] * len(doc)
    for s, f in sorted(set(zip(src.tolist(), fil.tolist(), strict=True))):
        rows = np.flatnonzero((src == s) & (fil == f))
        got, lengths = sources[s].files[f].read(doc[rows])
        for r, t, q in zip(rows.tolist(), got, lengths, strict=True):
            tokens[r], seqs[r] = t, q
    counts = np.fromiter((len(t) for t in tokens), np.int64, len(tokens))
    offsets = np.zeros(len(tokens) + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    values = np.concatenate(tokens).astype(np.uint32) if tokens else np.zeros(0, np.uint32)
    cols: list[Any] = [
        pa.ListArray.from_arrays(pa.array(offsets), pa.array(values)),
        pa.array(counts),
        names.take(pa.array(src.astype(np.int32))),
    ]
    if SEQUENCES in schema.names:
        seq_counts = np.fromiter((len(q) for q in seqs), np.int32, len(seqs))
        seq_offsets = np.zeros(len(seqs) + 1, np.int32)
        np.cumsum(seq_counts, out=seq_offsets[1:])
        flat = np.concatenate(seqs).astype(np.int32) if seqs else np.zeros(0, np.int32)
        cols.append(pa.ListArray.from_arrays(pa.array(seq_offsets), pa.array(flat)))
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def _slice_tokens(source: Source, first: int, end: int) -> int:
    """Tokens of documents ``first..end`` of ``source`` (two pointer reads per file the slice touches)."""
    total, start = 0, 0
    for f in source.files:
        lo, hi = max(first - start, 0), min(end - start, f.documents)
        if lo < hi:
            total += f.tokens_before(hi) - f.tokens_before(lo)
        start += f.documents
        if start >= end:
            break
    return total


def _estimate_docs(source: Source, quota: int, shards: int, k: int) -> int:
    """Documents shard ``k`` takes from ``source`` (for progress): its slice's documents scaled by quota / tokens."""
    first, end = slices(source, shards)[k]
    tokens = _slice_tokens(source, first, end)
    return round((end - first) * quota / tokens) if tokens else 0
