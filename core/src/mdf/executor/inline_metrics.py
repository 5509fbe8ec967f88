"""What the inline executor measures besides rows, and the line it adds under ``mdf run``'s table."""

from __future__ import annotations

from dataclasses import dataclass

from mdf.run_stats import ExecutorMetrics


@dataclass
class InlineMetrics(ExecutorMetrics):
    """The inline executor: worker threads, the peak bytes of batches held, when the first batch arrived."""

    workers: int = 1
    first_batch_unix_s: float | None = None  # start-up cost, in benchmarks
    peak_bytes_in_flight: int = 0

    def run_lines(self) -> list[str]:
        return [f"workers: {self.workers} thread(s); peak {self.peak_bytes_in_flight / 2**20:,.1f} MiB of batches held"]
