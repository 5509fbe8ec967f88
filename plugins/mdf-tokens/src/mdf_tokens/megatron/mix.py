"""The plan of a mix: which documents of which Megatron files each output shard reads, decided before any work.

Why at planning time: a budget in tokens needs each document's token count, which a Megatron ``.idx`` holds (no
tokenizing). So the whole selection is a function of the file listing, the weights, ``max_tokens`` and ``seed``:
every executor and every worker (an inline thread, a Ray loader on another machine) computes the same plan, the
run is reproducible, and ``--resume`` redoes a shard exactly.

The plan, per source ``s`` with weight ``w_s`` (normalised) and ``T_s`` tokens:

* its budget ``B_s = w_s * max_tokens`` (without ``max_tokens``: the largest total the weights allow without
  repeating a document, ``min_s T_s / w_s``);
* its documents (its files in listing order) cut into ``shards`` contiguous slices of equal document count; slice
  ``k`` gets the quota ``q_ks = B_s * T_ks / T_s`` (rounded so the quotas add up to ``B_s`` exactly);
* shard ``k`` takes, from each source's slice, documents in a seeded order (a permutation inside consecutive windows
  of ``shuffle_window`` documents, the windows in a seeded order; a new order per epoch) until the quota is met:
  a document is taken while the tokens taken so far plus half of it stay within the quota, so each slice ends
  within half a document of its quota. A quota above the slice's tokens repeats it (epochs);
* the sources' documents are interleaved in proportion: each document is placed at the fraction of its source's
  quota it completes, and the shard emits documents in that order, so every stretch of a part file carries the
  weights.

Memory: a shard's plan is three arrays over the documents it emits (source, file, document: ~17 bytes each) and
the per-document token counts of its slices (8 bytes each); the documents' tokens are read a batch at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mdf_tokens.megatron.files import MegatronFile


@dataclass(frozen=True)
class Source:
    name: str
    weight: float
    files: list[MegatronFile]

    @property
    def documents(self) -> int:
        return sum(f.documents for f in self.files)

    @property
    def tokens(self) -> int:
        return sum(f.tokens for f in self.files)


@dataclass(frozen=True)
class ShardPlan:
    """What shard ``k`` emits, in order: ``source[i]``'s ``file[i]``'s document ``doc[i]`` (``tokens[i]`` tokens)."""

    source: np.ndarray  # int16: index into the mix's sources
    file: np.ndarray  # int32: index into that source's files
    doc: np.ndarray  # int64: document in that file
    tokens: np.ndarray  # int64


def budgets(sources: list[Source], max_tokens: int | None) -> list[int]:
    """Each source's token budget (integers adding up to ``max_tokens``)."""
    total_w = sum(s.weight for s in sources)
    weights = [s.weight / total_w for s in sources]
    if max_tokens is None:  # as much as the weights allow without repeating a document
        max_tokens = int(min(s.tokens / w for s, w in zip(sources, weights, strict=True)))
    return apportion(max_tokens, weights)


def apportion(total: int, shares: list[float]) -> list[int]:
    """Integers proportional to ``shares`` that add up to ``total`` (largest remainders; ties by position)."""
    s = sum(shares)
    exact = [total * x / s if s else 0.0 for x in shares]
    out = [math.floor(e) for e in exact]
    for i in sorted(range(len(exact)), key=lambda i: (out[i] - exact[i], i))[: total - sum(out)]:
        out[i] += 1
    return out


def slices(source: Source, shards: int) -> list[tuple[int, int]]:
    """``(first, end)`` document numbers (over the source's files in order) of each shard's slice."""
    n = source.documents
    return [(n * k // shards, n * (k + 1) // shards) for k in range(shards)]


def slice_docs(source: Source, first: int, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(file index, document in file, tokens)`` of documents ``first..end`` of ``source``."""
    files, docs, tokens = [], [], []
    start = 0
    for i, f in enumerate(source.files):
        lo, hi = max(first - start, 0), min(end - start, f.documents)
        if lo < hi:
            files.append(np.full(hi - lo, i, np.int32))
            docs.append(np.arange(lo, hi, dtype=np.int64))
            tokens.append(f.doc_tokens[lo:hi])
        start += f.documents
        if start >= end:
            break
    if not files:
        return np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(files), np.concatenate(docs), np.concatenate(tokens)


def window_order(n: int, window: int, rng: np.random.Generator) -> np.ndarray:
    """A permutation of ``range(n)`` that moves documents only within consecutive windows of ``window``, the windows
    visited in a random order; ``window`` <= 1 keeps the order."""
    if window <= 1 or n <= 1:
        return np.arange(n, dtype=np.int64)
    starts = np.arange(0, n, window, dtype=np.int64)
    parts = [start + rng.permutation(min(window, n - start)) for start in rng.permutation(starts)]
    return np.concatenate(parts)


def take(tokens: np.ndarray, quota: int, window: int, rng: np.random.Generator) -> np.ndarray:
    """Positions (into ``tokens``) of the documents a slice gives for ``quota`` tokens, epoch after epoch, each epoch
    in a new window order; a document is taken while the total plus half of it stays within the quota."""
    total = int(tokens.sum())
    if quota <= 0 or total <= 0:
        return np.zeros(0, np.int64)
    out, taken = [], 0
    while taken < quota:
        order = window_order(len(tokens), window, rng)
        ends = taken + np.cumsum(tokens[order])
        mids = ends - tokens[order] / 2
        k = int(np.searchsorted(mids, quota, side="right"))  # documents whose middle is within the quota
        out.append(order[:k])
        if k < len(order):
            break
        taken = int(ends[-1])
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def shard_plan(
    sources: list[Source], quotas: list[list[int]], shards: int, k: int, window: int, seed: int
) -> ShardPlan:
    """The documents shard ``k`` emits, interleaved in proportion to the sources' quotas."""
    parts: list[tuple[np.ndarray, ...]] = []
    for s, source in enumerate(sources):
        first, end = slices(source, shards)[k]
        files, docs, tokens = slice_docs(source, first, end)
        rng = np.random.default_rng([seed, k, s])
        pick = take(tokens, quotas[s][k], window, rng)
        t = tokens[pick]
        share = (np.cumsum(t) - t / 2) / max(quotas[s][k], 1)  # where each document falls in its source's quota
        parts.append((np.full(len(pick), s, np.int16), files[pick], docs[pick], t, share))
    if not parts:
        empty = np.zeros(0, np.int64)
        return ShardPlan(empty.astype(np.int16), empty.astype(np.int32), empty, empty)
    src, fil, doc, tok, share = (np.concatenate(x) for x in zip(*parts, strict=True))
    order = np.lexsort((src, share))  # by place in the quota, then by source
    return ShardPlan(src[order], fil[order], doc[order], tok[order])
