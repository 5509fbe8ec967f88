"""Cluster dedup between its two passes: (key, position) pairs -> connected components -> roots.

Rows sharing a key are connected; components are closed transitively (row A shares a band with B, B with C:
one cluster), and the *root* of a cluster is its smallest position, which is the row kept. Positions are
``shard_index << 40 | row``, so "smallest" is "first in input order" whatever executor or timing produced the
pairs, which is what makes cluster mode give the same rows inline and on Ray.

Only positions that share a key with another row ever get an entry; every other row is its own root.
"""

from __future__ import annotations

import numpy as np

from mdf.arrowpy import as_numpy

POSITION_ROW_BITS = 40  # rows per shard < 2**40; shard index in the bits above


def positions(shard_index: int, row_offset: int, n: int) -> np.ndarray:
    """Global positions of ``n`` consecutive rows: ordered by shard, then row."""
    base = (shard_index << POSITION_ROW_BITS) + row_offset
    return np.arange(base, base + n, dtype=np.uint64)


def key_edges(keys: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One edge (smallest position of the key, position) for every extra occurrence of a key."""
    order = np.lexsort((positions, keys))
    k, p = keys[order], positions[order]
    first = np.ones(len(k), dtype=bool)
    first[1:] = k[1:] != k[:-1]
    group_min = p[first][np.cumsum(first) - 1]
    extra = ~first & (p != group_min)
    return group_min[extra], p[extra]


def components(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(positions, roots)``: the root (smallest member) of every position that appears in an edge."""
    if not len(left):
        empty = np.zeros(0, dtype=np.uint64)
        return empty, empty
    nodes, index = np.unique(np.concatenate([left, right]), return_inverse=True)
    n = len(left)
    comp = _union_find(index[:n].astype(np.uint64), index[n:].astype(np.uint64), len(nodes))
    # the smallest member index is the smallest position because ``nodes`` is sorted
    return nodes, nodes[comp]


def _union_find(left: np.ndarray, right: np.ndarray, n: int) -> np.ndarray:
    try:
        from mdf_kernels import union_find
    except ImportError:
        return _union_find_numpy(left, right, n)
    import pyarrow as pa

    return as_numpy(union_find(pa.array(left), pa.array(right), n)).astype(np.int64)


def _union_find_numpy(left: np.ndarray, right: np.ndarray, n: int) -> np.ndarray:
    """Min-label propagation (vectorised): each round every edge pulls both ends to the smaller label."""
    label = np.arange(n, dtype=np.int64)
    a, b = left.astype(np.int64), right.astype(np.int64)
    while True:
        m = np.minimum(label[a], label[b])
        new = label.copy()
        np.minimum.at(new, a, m)
        np.minimum.at(new, b, m)
        new = new[new]  # pointer jumping
        if np.array_equal(new, label):
            return label
        label = new
