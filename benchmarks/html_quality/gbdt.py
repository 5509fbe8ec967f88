"""Gradient-boosted regression trees on the log loss, in numpy: the block model's learner.

Why our own (80 lines) and not scikit-learn's: the model must be exported to the kernel's file format and
retrained byte for byte from the repository. scikit-learn's fast learner (``HistGradientBoostingClassifier``)
keeps its trees in private attributes, and its thresholds are midpoints between bins, where the kernel
compares single-precision features. Here every split value is a feature value seen in training (a float32),
the split is ``x <= value`` as in the kernel, leaves are float32, and every step is deterministic: same data,
same trees.

Each tree is grown level by level to ``depth``; a split maximises the second-order gain
``GL^2/(HL+l2) + GR^2/(HR+l2) - G^2/(H+l2)`` over per-feature histograms of at most ``bins`` candidate values
(weighted quantiles), with at least ``min_hess`` of hessian on each side; a leaf is ``-lr * G / (H + l2)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Tree:
    """Nodes in breadth-first order: ``feature`` -1 marks a leaf whose ``value`` is added to the logit."""

    feature: list[int] = field(default_factory=list)
    value: list[float] = field(default_factory=list)  # split value (float32) or leaf value (float32)
    left: list[int] = field(default_factory=list)
    right: list[int] = field(default_factory=list)


@dataclass
class Ensemble:
    base: float
    trees: list[Tree]

    def logit(self, X: np.ndarray) -> np.ndarray:
        """Sum over trees in order, in float64, as the kernel does."""
        out = np.full(len(X), self.base, dtype=np.float64)
        for t in self.trees:
            node = np.zeros(len(X), dtype=np.int64)
            feat = np.array(t.feature)
            val = np.array(t.value, dtype=np.float32)
            left, right = np.array(t.left), np.array(t.right)
            while True:
                f = feat[node]
                inner = f >= 0
                if not inner.any():
                    break
                rows = np.nonzero(inner)[0]
                go_left = X[rows, f[rows]] <= val[node[rows]]
                node[rows] = np.where(go_left, left[node[rows]], right[node[rows]])
            out += val[node].astype(np.float64)
        return out


def candidate_values(x: np.ndarray, bins: int) -> np.ndarray:
    """Up to ``bins`` split values of one feature: its distinct values, or quantiles of them (float32)."""
    u = np.unique(x)
    if len(u) > bins:
        u = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1)[1:-1], method="inverted_cdf"))
    return u[:-1] if len(u) and u[-1] == x.max() else u


def fit(X, y, w, trees=200, depth=4, lr=0.1, l2=1.0, min_hess=2.0, bins=64) -> Ensemble:
    X = np.asarray(X, dtype=np.float32)
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n, m = X.shape
    values = [candidate_values(X[:, j], bins) for j in range(m)]
    nb = bins + 1
    # bin b of feature j holds x with values[j][b-1] < x <= values[j][b]; a split at b sends bins <= b left
    B = np.stack([np.searchsorted(values[j], X[:, j], side="left") for j in range(m)], axis=1)
    flat = (B + (np.arange(m) * nb)[None, :]).astype(np.intp)  # (feature, bin) cells of each row
    usable = np.zeros((m, nb), dtype=bool)
    for j in range(m):
        usable[j, : len(values[j])] = True
    pos = (w * y).sum()
    base = float(np.log(max(pos, 1e-9) / max(w.sum() - pos, 1e-9)))
    F = np.full(n, base)
    out = []
    for _ in range(trees):
        p = 1.0 / (1.0 + np.exp(-F))
        g, h = w * (p - y), w * p * (1 - p)

        def hist(idx: np.ndarray) -> np.ndarray:
            cells = flat[idx].ravel()
            gh = np.bincount(cells, weights=np.repeat(g[idx], m), minlength=m * nb)
            hh = np.bincount(cells, weights=np.repeat(h[idx], m), minlength=m * nb)
            return np.stack([gh.reshape(m, nb), hh.reshape(m, nb)])

        tree = Tree()
        _add(tree)
        level = [(0, np.arange(n), hist(np.arange(n)))]
        for d in range(depth + 1):
            nxt = []
            for node, idx, hs in level:
                G, H = g[idx].sum(), h[idx].sum()
                best = None
                if hs is not None and len(idx) > 1:
                    GL, HL = np.cumsum(hs[0], axis=1), np.cumsum(hs[1], axis=1)
                    GR, HR = G - GL, H - HL
                    gain = GL**2 / (HL + l2) + GR**2 / (HR + l2) - G**2 / (H + l2)
                    gain = np.where(usable & (min_hess <= HL) & (min_hess <= HR), gain, -np.inf)
                    k = int(np.argmax(gain))
                    if np.isfinite(gain.flat[k]) and gain.flat[k] > 1e-9:
                        best = divmod(k, nb)
                if best is None:
                    tree.value[node] = float(np.float32(-lr * G / (H + l2)))
                    continue
                j, b = best
                tree.feature[node] = j
                tree.value[node] = float(values[j][b])
                go_left = B[idx, j] <= b
                left, right = idx[go_left], idx[~go_left]
                # histogram of the smaller child; the larger one's is the parent's minus it
                small = hist(left if len(left) <= len(right) else right) if d + 1 < depth else None
                left_small = len(left) <= len(right)
                for side, rows, is_small in ((tree.left, left, left_small), (tree.right, right, not left_small)):
                    side[node] = _add(tree)
                    child = None if small is None else small if is_small else hs - small
                    nxt.append((side[node], rows, child))
            level = nxt
        out.append(tree)
        F += Ensemble(0.0, [tree]).logit(X)
    return Ensemble(base, out)


def _add(tree: Tree) -> int:
    tree.feature.append(-1)
    tree.value.append(0.0)
    tree.left.append(0)
    tree.right.append(0)
    return len(tree.feature) - 1
