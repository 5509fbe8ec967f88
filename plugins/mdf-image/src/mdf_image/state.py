"""``hamming_near_index``: the bucket-side state of ``image_near_dedup`` (a state type, see ``mdf.StateType``).

Multi-index hashing in an ``mdf_kernels.NearIndex``: every 64-bit hash is filed under its block keys, and a
query returns, per block key, the smallest position already filed under that key whose hash is within the
distance (a popcount each), then files the new hash. Filing is idempotent per position, so a batch retried
after a crash gets the answer it got the first time. Lives here, not in core: only this plugin asks it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from mdf import NO_MATCH, KeyState, StateType, as_numpy


class NearIndexState(StateType):
    """Hamming near-index of one namespace in one bucket."""

    name = "hamming_near_index"

    def __init__(self) -> None:
        from mdf_kernels import NearIndex

        self.index: Any = NearIndex()

    def query_insert(
        self, keys: np.ndarray, hashes: np.ndarray, positions: np.ndarray, max_distance: int, stride: int
    ) -> np.ndarray:
        u64 = pa.uint64()
        found = self.index.query_insert(
            pa.array(keys, u64), pa.array(hashes, u64), pa.array(positions, u64), max_distance, stride
        )
        return as_numpy(found.fill_null(NO_MATCH))

    def stats(self) -> tuple[int, int]:
        return len(self.index), int(self.index.memory_bytes())


def nearest(
    state: KeyState,
    namespace: str,
    keys: np.ndarray,
    hashes: np.ndarray,
    positions: np.ndarray,
    max_distance: int,
    stride: int = 1,
) -> np.ndarray:
    """``keys`` holds ``k`` block keys per hash (row-major), ``hashes`` and ``positions`` one per hash. Returns
    per hash the smallest position of an earlier hash within ``max_distance`` bits sharing one of its keys, or
    ``NO_MATCH``; every hash is filed. With ``stride > 1`` a row owns several hashes (positions
    ``row * stride + c``) that never match each other. One round trip: the keys route to buckets."""
    n = len(hashes)
    if not n:
        return np.zeros(0, dtype=np.uint64)
    k = len(keys) // n
    arrays = (keys, np.repeat(hashes, k), np.repeat(positions, k))
    pieces = state.request(NearIndexState, namespace, "query_insert", keys, arrays, max_distance, stride)
    found = state.gather(pieces, np.empty(len(keys), dtype=np.uint64))
    return found.reshape(n, k).min(axis=1)
