"""Live progress on a terminal: rows read of the total; per stage rows in/out, rows/s over the last seconds,
and which stage is the bottleneck now. Silent when not a TTY.

Rates come from the run's :class:`mdf.recording.Timeline` (every executor feeds it once per finished batch), so
all executors show the same columns. The bottleneck is the stage whose operators were busiest, per replica, over
the same window; the executor says how many replicas each stage has (:meth:`LiveProgress.start`), since only it
knows (Ray places up to ``replicas.max``, whatever chose Ray: ``type``, ``address`` or ``RAY_ADDRESS``).
"""

from __future__ import annotations

import math
import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from mdf.metrics import RunMetrics
from mdf.terminal import shown


class LiveProgress:
    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        self._tasks: dict[str, Any] = {}
        self._ops: list[int] = []  # operators per stage
        self.replicas: list[int] = []  # per stage, as the executor placed them: busy time is divided by it

    @property
    def enabled(self) -> bool:
        return self.console.is_terminal

    def start(self, plan: Any, stage_names: list[str], replicas: list[int] | None = None) -> None:
        """Show the bars; ``replicas`` per stage (default one each: an executor without replicas)."""
        if not self.enabled:
            return
        self._progress = Progress(
            TextColumn("{task.description:<14}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        stages = plan.recipe.stages
        self._ops = [len(st.operators) for st in stages]
        self.replicas = list(replicas) if replicas is not None else [1] * len(stages)
        total = _estimate_rows(plan)
        self._tasks["read"] = self._progress.add_task("read", total=total, info="")
        for name in stage_names:
            self._tasks[name] = self._progress.add_task(shown(name), total=total, info="")
        self._progress.start()

    def update_counts(self, metrics: RunMetrics) -> None:
        """Rows read, then per stage: rows in (bar), rows out, rows/s now, and the bottleneck marker."""
        if self._progress is None:
            return
        self._progress.update(self._tasks["read"], completed=metrics.rows_read, info=f"{metrics.batches} batches")
        rows = stage_rates(metrics, self._ops, self.replicas)
        worst = max(range(len(rows)), key=lambda i: rows[i][3]) if rows and any(r[3] for r in rows) else None
        for i, (name, (rows_in, rows_out, rate, _)) in enumerate(zip(list(self._tasks)[1:], rows, strict=False)):
            mark = "  [bold red]bottleneck[/]" if i == worst and len(rows) > 1 else ""
            info = f"{rows_out:,} out  {rate:,.0f} rows/s{mark}"
            self._progress.update(self._tasks[name], completed=rows_in, info=info)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def stage_rates(
    metrics: RunMetrics, ops_per_stage: list[int], replicas: list[int], window_s: float = 3.0
) -> list[tuple[int, int, float, float]]:
    """Per stage: ``(rows in, rows out, rows/s in over the last window_s, busy seconds per replica in it)``."""
    tl = metrics.timeline
    if not tl.ops:
        return [(0, 0, 0.0, 0.0) for _ in ops_per_stage]
    recent = max(1, math.ceil(window_s / tl.bucket_s))
    span = max(1e-6, time.perf_counter() - tl.start - max(0, len(tl.ops) - recent) * tl.bucket_s)
    out, first = [], 0
    for n, reps in zip(ops_per_stage, replicas, strict=True):
        last = first + n - 1
        window = tl.ops[-recent:]
        busy = sum(col(k, 2, window) for k in range(first, last + 1))
        out.append(
            (int(col(first, 0, tl.ops)), int(col(last, 1, tl.ops)), col(first, 0, window) / span, busy / max(1, reps))
        )
        first += n
    return out


def col(k: int, j: int, buckets: list[list[list[float]]]) -> float:
    """Column ``j`` (rows in, rows out, busy s) of operator ``k`` summed over ``buckets``."""
    return sum(b[k][j] for b in buckets if k < len(b))


def _estimate_rows(plan: Any) -> int | None:
    """Exact total when every shard knows its row count (Parquet footers); unknown otherwise."""
    rows = [s.rows for s in plan.shards]
    return None if any(r is None for r in rows) else sum(rows)
