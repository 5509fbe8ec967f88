"""Bucket-side state types of ``minhash_dedup(verify: true)`` (see ``mdf.StateType``); core knows neither.

* ``minhash_band_owners``: per band key, the position of the first row that had it.
* ``minhash_signatures``: per row position, its compact signature (``num_perm`` bytes).

Both are a :class:`SortedRuns` store: each write is one sorted run (keys, rows), a read is one
``searchsorted`` per run, and when runs pile up they merge into one (an LSM tree with one level). The first
value written for a key is kept, so a batch retried after a crash reads what the first attempt wrote: that is
the idempotency the key-state service asks of state types. Numpy throughout, no Python object per row.
"""

from __future__ import annotations

import numpy as np

from mdf import StateType

MAX_RUNS = 16


class SortedRuns:
    """``uint64`` key -> fixed-width row of ``dtype``, first write wins."""

    def __init__(self, width: int, dtype: type = np.uint8) -> None:
        self.width = width
        self.dtype = np.dtype(dtype)
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []

    def __len__(self) -> int:
        return sum(len(k) for k, _ in self.runs)

    def nbytes(self) -> int:
        return sum(k.nbytes + v.nbytes for k, v in self.runs)

    def get(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, found)``: the stored row of each key (zeros where ``found`` is False)."""
        out = np.zeros((len(keys), self.width), dtype=self.dtype)
        found = np.zeros(len(keys), dtype=bool)
        for k, v in self.runs:
            at = np.minimum(np.searchsorted(k, keys), len(k) - 1)
            hit = (k[at] == keys) & ~found
            out[hit] = v[at[hit]]
            found |= hit
        return out, found

    def put(self, keys: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Store ``rows[i]`` at ``keys[i]`` where the key is new (the first of a repeated key wins); return
        the row each key now holds."""
        if rows.shape != (len(keys), self.width):
            raise ValueError(f"rows must be {len(keys)} x {self.width}, got {rows.shape}")
        held, found = self.get(keys)
        missing = np.flatnonzero(~found)
        if len(missing):
            new_keys, first = np.unique(keys[missing], return_index=True)  # sorted, first occurrence each
            new_rows = rows[missing][first]
            self.runs.append((new_keys, new_rows))
            held[missing] = new_rows[np.searchsorted(new_keys, keys[missing])]
            if len(self.runs) > MAX_RUNS:
                self._merge()
        return held

    def _merge(self) -> None:
        k = np.concatenate([r[0] for r in self.runs])
        v = np.concatenate([r[1] for r in self.runs])
        order = np.argsort(k, kind="stable")  # keys are unique across runs: a key is written once
        self.runs = [(k[order], v[order])]


class BandOwners(StateType):
    """Per band key: the position of the first row filed under it."""

    name = "minhash_band_owners"

    def __init__(self) -> None:
        self.store = SortedRuns(1, np.uint64)

    def owners(self, keys: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The owner of each key, filing ``positions[i]`` as the owner of a key nobody had."""
        return self.store.put(keys, positions.reshape(-1, 1))[:, 0]

    def stats(self) -> tuple[int, int]:
        return len(self.store), self.store.nbytes()


class Signatures(StateType):
    """Per row position: its compact signature, ``width`` bytes (set by the first write)."""

    name = "minhash_signatures"

    def __init__(self) -> None:
        self.store: SortedRuns | None = None

    def put(self, positions: np.ndarray, rows: np.ndarray) -> None:
        if self.store is None:
            self.store = SortedRuns(rows.shape[1])
        self.store.put(positions, rows)

    def get(self, positions: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, found)`` for ``positions``."""
        return (self.store or SortedRuns(width)).get(positions)

    def stats(self) -> tuple[int, int]:
        return (len(self.store), self.store.nbytes()) if self.store else (0, 0)
