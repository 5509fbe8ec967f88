"""Per-operator and per-run counters.

Counters are plain numbers and dicts so metrics from many workers (Ray actors) merge by addition and
serialise to ``metrics.json`` without custom encoders. Reason counts come from ``pyarrow.compute.value_counts``
on the rejected batch, never from a Python loop over rows.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from mdf.recording import ShardLog, Timeline, empty_histogram, latency_bucket

REASON = "_reason"
REASON_DETAIL = "_reason_detail"
"""Optional column beside ``_reason`` with the long text behind a short reason class (a decoder's message), so
reasons stay few and countable while the rejected rows keep the full story. Kept rows never carry it."""


@dataclass
class OperatorMetrics:
    """Rows in/out, rejected rows by reason, and time spent for one operator."""

    name: str
    kind: str
    rows_in: int = 0
    rows_out: int = 0
    rows_rejected: int = 0
    batches: int = 0
    time_s: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)
    latency: list[int] = field(default_factory=empty_histogram)  # batches per bin of mdf.recording's edges
    counters: dict[str, int] = field(default_factory=dict)
    """Operator-specific counts beyond rows (e.g. lines a line-cleaning refiner removed, by rule); summed on
    merge like the rest."""

    def count(self, name: str, n: int) -> None:
        """Add ``n`` to the operator-specific counter ``name``."""
        self.counters[name] = self.counters.get(name, 0) + n

    def record(self, rows_in: int, rows_out: int, rejected: pa.RecordBatch | None, seconds: float) -> None:
        self.rows_in += rows_in
        self.rows_out += rows_out
        self.batches += 1
        self.time_s += seconds
        self.latency[latency_bucket(seconds)] += 1
        if rejected is not None and rejected.num_rows:
            self.rows_rejected += rejected.num_rows
            count_reasons(rejected, self.reasons)

    def merge(self, other: OperatorMetrics) -> None:
        self.rows_in += other.rows_in
        self.rows_out += other.rows_out
        self.rows_rejected += other.rows_rejected
        self.batches += other.batches
        self.time_s += other.time_s
        self.latency = [a + b for a, b in zip(self.latency, other.latency, strict=True)]
        for k, v in other.reasons.items():
            self.reasons[k] = self.reasons.get(k, 0) + v
        for k, v in other.counters.items():
            self.count(k, v)

    @property
    def pass_rate(self) -> float:
        return self.rows_out / self.rows_in if self.rows_in else 1.0

    @property
    def rows_per_s(self) -> float:
        return self.rows_in / self.time_s if self.time_s > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pass_rate"] = round(self.pass_rate, 6)
        d["rows_per_s"] = round(self.rows_per_s, 1)
        return d


def count_reasons(rejected: pa.RecordBatch, into: dict[str, int]) -> None:
    """Add the counts of each ``_reason`` value of ``rejected`` to ``into``."""
    idx = rejected.schema.get_field_index(REASON)
    if idx < 0:
        into["unknown"] = into.get("unknown", 0) + rejected.num_rows
        return
    for item in pc.value_counts(rejected.column(idx)).to_pylist():
        key = item["values"] if item["values"] is not None else "unknown"
        into[key] = into.get(key, 0) + item["counts"]


@dataclass
class RunMetrics:
    """Whole-run accounting: ``rows_read == rows_written + rows_rejected`` is checked at the end."""

    executor: str
    rows_read: int = 0
    rows_written: int = 0
    rows_rejected: int = 0
    shards: int = 0
    batches: int = 0
    wall_s: float = 0.0
    reader_reasons: dict[str, int] = field(default_factory=dict)
    damaged: list[dict[str, Any]] = field(default_factory=list)  # {"file", "offset", "error"} per damaged file
    stages: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    timeline: Timeline = field(default_factory=Timeline)
    shard_log: ShardLog = field(default_factory=ShardLog)
    report: Path | None = None  # the HTML report, once written

    def observe(
        self, shard: str, kept: int, rejected: int, reader_rejected: int, stages: list[list[OperatorMetrics]]
    ) -> None:
        """Record one finished batch for the report: its shard's rows and, from the cumulative per-operator
        counters ``stages`` (recipe order), what each operator did since the previous batch."""
        self.shard_log.observe(shard, kept, rejected, reader_rejected, self.timeline.last_observed)
        self.timeline.observe([op for ops in stages for op in ops], self.rows_written + self.rows_rejected)

    @property
    def balanced(self) -> bool:
        return self.rows_read == self.rows_written + self.rows_rejected

    def operators(self) -> list[OperatorMetrics]:
        return [op for stage in self.stages for op in stage["operators"]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "executor": self.executor,
            "rows_read": self.rows_read,
            "rows_written": self.rows_written,
            "rows_rejected": self.rows_rejected,
            "balanced": self.balanced,
            "shards": self.shards,
            "batches": self.batches,
            "wall_s": round(self.wall_s, 4),
            "rows_per_s": round(self.rows_read / self.wall_s, 1) if self.wall_s > 0 else 0.0,
            "reader_reasons": self.reader_reasons,
            "damaged_inputs": self.damaged,
            "stages": [{"name": s["name"], "operators": [op.to_dict() for op in s["operators"]]} for s in self.stages],
            "timeline": self.timeline.to_dict(),
            "shard_log": self.shard_log.to_dict(),
            **self.extra,
        }

    def write_json(self, path: str | os.PathLike[str]) -> Path:
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2))
        os.replace(tmp, out)
        return out
