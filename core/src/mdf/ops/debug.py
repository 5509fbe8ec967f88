"""Operators for measuring and testing the engine itself, not the data.

``noop_refiner`` returns its batch untouched: a chain of them measures pure executor overhead.
``delay_refiner`` sleeps per batch and per row: a stand-in for a slow model stage when testing
backpressure, replica scaling and fault tolerance, without a model. With ``hold_dir`` it also stops a run at a
known point: a test that kills a run "mid-way" by watching the clock fails on a loaded machine, where the run
can finish before the test looks (seen in CI at load 6.6).
"""

from __future__ import annotations

import fcntl
import os
import time
import uuid
from pathlib import Path

import pyarrow as pa
from pydantic import Field

from mdf.operators import Params, Refiner


class NoopRefiner(Refiner):
    """Return the batch unchanged (measures executor overhead)."""

    name = "noop_refiner"
    writes = {}  # adds no column

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        return batch


class DelayRefiner(Refiner):
    """Sleep seconds_per_batch + seconds_per_row x rows, then return the batch (simulates a slow stage).

    With ``hold_dir``, the replicas count the rows they passed in that folder (one file per batch, so replicas in
    several processes of one machine share the count, under a file lock); once ``hold_after_rows`` have passed,
    every further batch waits until a file named ``release`` appears there (at most ``hold_max_s``). A test then
    sees the run stopped with a known share of its rows done, however loaded the machine is, kills it, and creates
    ``release`` before it resumes the same recipe."""

    name = "delay_refiner"
    writes = {}  # adds no column

    class Params(Params):
        seconds_per_batch: float = Field(0.0, ge=0, description="sleep per batch")
        seconds_per_row: float = Field(0.0, ge=0, description="extra sleep per row")
        hold_dir: str | None = Field(None, description="folder the replicas count passed rows in (one machine)")
        hold_after_rows: int = Field(0, ge=0, description="rows passed before batches wait for hold_dir/release")
        hold_max_s: float = Field(600.0, gt=0, description="longest wait for the release file")

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if self.params.hold_dir is not None:
            self._hold(Path(self.params.hold_dir), batch.num_rows)
        time.sleep(self.params.seconds_per_batch + self.params.seconds_per_row * batch.num_rows)
        return batch

    def _hold(self, folder: Path, rows: int) -> None:
        """Count and mark under one lock, so no two replicas pass on the same count: at most
        ``hold_after_rows - 1`` plus one batch pass before the hold, a bound a test can reason from."""
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if passed_rows(folder) >= self.params.hold_after_rows:
                deadline = time.monotonic() + self.params.hold_max_s
                while not (folder / "release").exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
            (folder / f"{rows}-{uuid.uuid4().hex}").touch()


def passed_rows(folder: Path) -> int:
    """Rows that ``delay_refiner`` replicas let through ``hold_dir`` ``folder`` (one file per batch, named by its
    rows); 0 before the first batch. A test reads it to know the run has reached its hold."""
    if not folder.exists():
        return 0
    return sum(int(n.split("-")[0]) for n in os.listdir(folder) if n[0].isdigit())
