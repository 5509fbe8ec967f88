"""What a run records over time, for the report: per-operator counters in time buckets, per-shard rows, and
batch latency histograms.

Everything is plain lists and dicts of numbers so Ray workers' pieces merge by addition and ``metrics.json``
needs no custom encoder. Memory is bounded whatever the run's length: the timeline keeps at most
``MAX_BUCKETS`` buckets and doubles the bucket width (merging neighbours) when a run outgrows them, and a
latency histogram is ``len(LATENCY_EDGES_S) + 1`` counters however many batches it saw.

Both executors feed this from one call per finished batch (:meth:`mdf.metrics.RunMetrics.observe`) with the
*cumulative* per-operator counters they already keep; the timeline stores the differences, so neither executor
needs to compute per-batch deltas.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

# 10 us, 20 us, ... ~84 s: doubling edges cover a cheap filter on a small batch and a model on a big one.
LATENCY_EDGES_S: tuple[float, ...] = tuple(1e-5 * 2**i for i in range(24))
MAX_BUCKETS = 240
FIRST_BUCKET_S = 0.25


def latency_bucket(seconds: float) -> int:
    """Index of the histogram bin of ``seconds``: bin ``i`` holds ``edges[i-1] <= s < edges[i]``."""
    return bisect.bisect_right(LATENCY_EDGES_S, seconds)


def empty_histogram() -> list[int]:
    return [0] * (len(LATENCY_EDGES_S) + 1)


def histogram_quantile(counts: Sequence[int], q: float) -> float:
    """Upper edge of the bin holding quantile ``q``: an upper bound within a factor of two."""
    total = sum(counts)
    if not total:
        return 0.0
    seen = 0
    for i, c in enumerate(counts):
        seen += c
        if seen >= q * total:
            return LATENCY_EDGES_S[min(i, len(LATENCY_EDGES_S) - 1)]
    return LATENCY_EDGES_S[-1]


class Counted(Protocol):
    """The cumulative counters of one operator the timeline reads (``OperatorMetrics`` has them)."""

    rows_in: int
    rows_out: int
    time_s: float


@dataclass
class Timeline:
    """Per-operator rows in/out and busy seconds, and rows done, in fixed-width time buckets since the start.

    ``ops[b][k] = [rows_in, rows_out, busy_s]`` of operator ``k`` (recipe order, stages flattened) in bucket
    ``b``; ``done[b]`` rows finished (written or rejected) in bucket ``b``. The CPU time of this process
    (``time.process_time``) is kept too: for inline runs it is the whole run's CPU, for Ray runs the driver's.
    """

    bucket_s: float = FIRST_BUCKET_S
    start: float = field(default_factory=time.perf_counter)
    cpu_start: float = field(default_factory=time.process_time)
    started_at: float = field(default_factory=time.time)
    ops: list[list[list[float]]] = field(default_factory=list)
    done: list[float] = field(default_factory=list)
    cpu_s: float = 0.0
    _last_t: float = 0.0
    _last: list[tuple[int, int, float]] = field(default_factory=list)
    _last_done: int = 0

    def observe(self, operators: Sequence[Counted], rows_done: int) -> None:
        """Add what changed since the previous call (cumulative counters in, differences stored).

        The change is spread evenly over the time since the previous call, so a batch that took two seconds
        shows as two seconds of throughput rather than one spike in the bucket where it finished."""
        now = time.perf_counter() - self.start
        self.cpu_s = time.process_time() - self.cpu_start
        if len(self._last) != len(operators):
            self._last = [(0, 0, 0.0)] * len(operators)
        deltas = []
        for k, op in enumerate(operators):
            last_in, last_out, last_t = self._last[k]
            deltas.append((op.rows_in - last_in, op.rows_out - last_out, op.time_s - last_t))
            self._last[k] = (op.rows_in, op.rows_out, op.time_s)
        done, self._last_done = rows_done - self._last_done, rows_done
        self._bucket(now)  # coarsen first, so the spans below use the final width
        begin = min(self._last_t, now)
        span = now - begin
        first, last = self._bucket(begin), self._bucket(now)
        for index in range(first, last + 1):
            if span <= 0 or first == last:
                share = 1.0
            else:
                lo, hi = max(begin, index * self.bucket_s), min(now, (index + 1) * self.bucket_s)
                share = max(0.0, hi - lo) / span
            row = self.ops[index]
            if len(row) < len(operators):
                row.extend([0, 0, 0.0] for _ in range(len(operators) - len(row)))
            for k, (d_in, d_out, d_t) in enumerate(deltas):
                row[k][0] += d_in * share
                row[k][1] += d_out * share
                row[k][2] += d_t * share
            self.done[index] += done * share
        self._last_t = now

    @property
    def last_observed(self) -> float:
        """Seconds since the start of the previous :meth:`observe` (0 before the first)."""
        return self._last_t

    def _bucket(self, elapsed: float) -> int:
        index = int(elapsed / self.bucket_s)
        while index >= MAX_BUCKETS:  # long run: halve the resolution rather than grow without bound
            self._coarsen()
            index = int(elapsed / self.bucket_s)
        while len(self.ops) <= index:
            self.ops.append([])
            self.done.append(0)
        return index

    def _coarsen(self) -> None:
        merged_ops: list[list[list[float]]] = []
        merged_done: list[float] = []
        for i in range(0, len(self.ops), 2):
            pair = self.ops[i : i + 2]
            width = max(len(p) for p in pair)
            merged_ops.append([[sum(p[k][j] for p in pair if k < len(p)) for j in range(3)] for k in range(width)])
            merged_done.append(sum(self.done[i : i + 2]))
        self.ops, self.done, self.bucket_s = merged_ops, merged_done, self.bucket_s * 2

    def to_dict(self) -> dict[str, Any]:
        width = self.operators
        rows = [[[round(c[0], 1), round(c[1], 1), round(c[2], 4)] for c in r] for r in self.ops]
        return {
            "bucket_s": self.bucket_s,
            "started_at": round(self.started_at, 3),
            "process_cpu_s": round(self.cpu_s, 4),
            "operators": width,
            "ops": [r + [[0, 0, 0.0]] * (width - len(r)) for r in rows],
            "done": [round(d, 1) for d in self.done],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Timeline:
        """A recorded timeline read back (for the report): buckets, widths and CPU time, nothing to observe."""
        return cls(
            bucket_s=float(d.get("bucket_s", FIRST_BUCKET_S)),
            started_at=float(d.get("started_at", 0.0)),
            ops=[[list(c) for c in row] for row in d.get("ops") or []],
            done=list(d.get("done") or []),
            cpu_s=float(d.get("process_cpu_s", 0.0)),
        )

    @property
    def operators(self) -> int:
        """Operators per bucket row (recipe order, stages flattened)."""
        return max((len(r) for r in self.ops), default=0)


@dataclass
class ShardLog:
    """Per shard: rows finished, kept, rejected by the reader (damaged input), batches, when work on its first
    batch began and when its last batch finished (seconds since the start)."""

    shards: dict[str, list[float]] = field(default_factory=dict)
    start: float = field(default_factory=time.perf_counter)

    def observe(self, shard: str, kept: int, rejected: int, reader_rejected: int, began: float) -> None:
        """``began``: seconds since the start when work on this batch began (the previous batch's end, inline)."""
        t = round(time.perf_counter() - self.start, 4)
        s = self.shards.get(shard)
        if s is None:
            self.shards[shard] = [kept + rejected, kept, reader_rejected, 1, round(began, 4), t]
            return
        s[0] += kept + rejected
        s[1] += kept
        s[2] += reader_rejected
        s[3] += 1
        s[5] = t

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": ["rows", "kept", "reader_rejected", "batches", "began_s", "done_s"],
            "shards": self.shards,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ShardLog:
        return cls(shards={k: list(v) for k, v in (d.get("shards") or {}).items()})
