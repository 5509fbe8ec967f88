"""A per-bucket store of fixed-width byte rows by position: what a verifying dedup keeps of each row.

``minhash_dedup(verify: true)`` stores a compact signature per row and, when a row's band key was taken by an
earlier row, fetches that row's signature to estimate their Jaccard similarity. Rows arrive in batches, so the
store appends each batch as a sorted run (positions, rows) and looks positions up by binary search in every
run; when runs pile up they are merged into one, which keeps a lookup at a few ``searchsorted`` calls (an LSM
tree with one level). Numpy arrays throughout: no Python object per row.
"""

from __future__ import annotations

import numpy as np

MAX_RUNS = 16


class PayloadStore:
    def __init__(self, width: int) -> None:
        self.width = width
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []

    def __len__(self) -> int:
        return sum(len(p) for p, _ in self.runs)

    def nbytes(self) -> int:
        return sum(p.nbytes + r.nbytes for p, r in self.runs)

    def put(self, positions: np.ndarray, rows: np.ndarray) -> None:
        """Store ``rows[i]`` (``width`` bytes) at ``positions[i]``; a position stored again keeps its first row."""
        if not len(positions):
            return
        if rows.shape != (len(positions), self.width):
            raise ValueError(f"rows must be {len(positions)} x {self.width} bytes, got {rows.shape}")
        _, new = self.get(positions)
        new = ~new
        order = np.argsort(positions[new], kind="stable")
        self.runs.append((positions[new][order], rows[new][order]))
        if len(self.runs) > MAX_RUNS:
            p = np.concatenate([r[0] for r in self.runs])
            v = np.concatenate([r[1] for r in self.runs])
            order = np.argsort(p, kind="stable")
            self.runs = [(p[order], v[order])]

    def get(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, found)``: the stored row of each position (zeros where ``found`` is False)."""
        out = np.zeros((len(positions), self.width), dtype=np.uint8)
        found = np.zeros(len(positions), dtype=bool)
        for p, v in self.runs:
            if not len(p):
                continue
            at = np.minimum(np.searchsorted(p, positions), len(p) - 1)
            hit = (p[at] == positions) & ~found
            out[hit] = v[at[hit]]
            found |= hit
        return out, found
