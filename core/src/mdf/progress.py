"""Live progress on a terminal: rows read of the total, and rows in/out per stage. Silent when not a TTY."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from mdf.metrics import RunMetrics


class LiveProgress:
    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        self._tasks: dict[str, Any] = {}

    @property
    def enabled(self) -> bool:
        return self.console.is_terminal

    def start(self, plan: Any, stage_names: list[str]) -> None:
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
        total = _estimate_rows(plan)
        self._tasks["read"] = self._progress.add_task("read", total=total, info="")
        for name in stage_names:
            self._tasks[name] = self._progress.add_task(name, total=total, info="")
        self._progress.start()

    def update(self, stages: list[list[Any]], metrics: RunMetrics) -> None:
        if self._progress is None:
            return
        self._progress.update(self._tasks["read"], completed=metrics.rows_read, info=f"{metrics.batches} batches")
        for name, ops in zip(list(self._tasks)[1:], stages, strict=False):
            if ops:
                rows_in, rows_out = ops[0].metrics.rows_in, ops[-1].metrics.rows_out
                self._progress.update(self._tasks[name], completed=rows_in, info=f"{rows_out:,} out")

    def update_counts(self, metrics: RunMetrics) -> None:
        """Ray runs: operator counts arrive with written batches; show rows read and rows written."""
        if self._progress is None:
            return
        self._progress.update(self._tasks["read"], completed=metrics.rows_read, info=f"{metrics.batches} batches")
        last = list(self._tasks)[-1]
        self._progress.update(
            self._tasks[last],
            completed=metrics.rows_written + metrics.rows_rejected,
            info=f"{metrics.rows_written:,} written",
        )

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def _estimate_rows(plan: Any) -> int | None:
    """Exact total when every shard knows its row count (Parquet footers); unknown otherwise."""
    rows = [s.rows for s in plan.shards]
    return None if any(r is None for r in rows) else sum(rows)
