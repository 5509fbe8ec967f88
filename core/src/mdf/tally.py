"""Counts of committed shards, so ``metrics.json`` after ``--resume`` covers the whole run.

A checkpoint lists the shards whose part files are committed; with it goes :func:`totals`, the counts of
exactly those shards (rows read, kept, rejected, reasons, damaged files, per-operator counts). Both executors
have several shards in flight at once (inline: one per worker thread; Ray: one per loader and more), so
:class:`ShardTally` keeps each shard's counts apart until its commit. A resumed run adds the restored totals to
its own (:func:`restore`).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from mdf.metrics import OperatorMetrics, RunMetrics
from mdf.run_stats import DamagedInput

Totals = dict[str, Any]
"""Plain data (it is saved in the checkpoint manifest as JSON): damaged files and operators as their dicts."""
_ROWS = ("rows_read", "rows_written", "rows_rejected", "batches")


def empty() -> Totals:
    return {**dict.fromkeys(_ROWS, 0), "reader_reasons": {}, "damaged": [], "operators": []}


def totals(metrics: RunMetrics, operators: list[OperatorMetrics]) -> Totals:
    """The counts of ``metrics`` and ``operators`` (recipe order) as plain data."""
    return {
        **{k: getattr(metrics, k) for k in _ROWS},
        "reader_reasons": dict(metrics.reader_reasons),
        "damaged": [d.to_dict() for d in metrics.damaged],
        "operators": [asdict(op) for op in operators],
    }


def merge(a: Totals, b: Totals) -> Totals:
    out = {k: a.get(k, 0) + b.get(k, 0) for k in _ROWS}
    reasons = dict(a.get("reader_reasons", {}))
    for k, v in b.get("reader_reasons", {}).items():
        reasons[k] = reasons.get(k, 0) + v
    ops = [OperatorMetrics.from_dict(d) for d in a.get("operators", [])]
    for i, d in enumerate(b.get("operators", [])):
        other = OperatorMetrics.from_dict(d)
        if i < len(ops):
            ops[i].merge(other)
        else:
            ops.append(other)
    damaged = [*a.get("damaged", []), *b.get("damaged", [])]
    return {**out, "reader_reasons": reasons, "damaged": damaged, "operators": [asdict(o) for o in ops]}


def restore(metrics: RunMetrics, saved: Totals) -> None:
    """Add the counts of shards a previous run committed to this run's ``metrics`` (operators by position)."""
    for k in _ROWS:
        setattr(metrics, k, getattr(metrics, k) + saved.get(k, 0))
    for k, v in saved.get("reader_reasons", {}).items():
        metrics.reader_reasons[k] = metrics.reader_reasons.get(k, 0) + v
    metrics.damaged[:0] = [DamagedInput.from_dict(d) for d in saved.get("damaged", [])]
    ops = metrics.operators()
    for op, d in zip(ops, saved.get("operators", []), strict=False):
        op.merge(OperatorMetrics.from_dict(d))


class ShardTally:
    """Per-shard counts while shards are in flight; :meth:`commit` returns the committed totals so far."""

    def __init__(self) -> None:
        self.open: dict[str, Totals] = {}
        self.committed = empty()

    def read(self, shard: str, meta: dict[str, Any]) -> None:
        t = self.open.setdefault(shard, empty())
        t["rows_read"] += meta["rows"]
        t["batches"] += 1
        for k, v in meta.get("reader_reasons", {}).items():
            t["reader_reasons"][k] = t["reader_reasons"].get(k, 0) + v
        t["damaged"].extend(d.to_dict() for d in meta.get("damaged") or [])

    def add(self, shard: str, written: int, rejected: int, operators: list[OperatorMetrics]) -> None:
        """Rows a batch kept and rejected, and operator counters (a batch's on Ray, a whole shard's inline)."""
        t = self.open.setdefault(shard, empty())
        t["rows_written"] += written
        t["rows_rejected"] += rejected
        if operators:
            t["operators"] = merge(t, {"operators": [asdict(m) for m in operators]})["operators"]

    def commit(self, shard: str) -> Totals:
        self.committed = merge(self.committed, self.open.pop(shard, empty()))
        return self.committed
