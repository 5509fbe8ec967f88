"""``mdf plan --measure``: run the recipe's stages on the sample, in this process, and time and weigh them.

The fixed multipliers are guesses about what operators do to memory; running them on the sample replaces a
guess by an observation. Per stage this records seconds per row and the peak memory growth while the stage ran,
per input row: the larger of Arrow's allocation peak (polled every millisecond from a thread; kernels release
the GIL) and the rise of the process's resident high-water mark, which Linux lets a process reset
(``/proc/self/clear_refs``) and which also sees memory outside Arrow (a model's tensors). Both can read low
(a peak between two polls, memory the allocator had cached), so the planner only ever lets a measurement make
batches *smaller* than the fixed multiplier would.

Operators' ``setup`` (model loading) and a warm-up pass over a few rows run before measuring: kernels
compiled on first use, regexes and allocator arenas are a one-off per worker, not a per-row cost.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from mdf.batching.payload import row_payload_bytes
from mdf.deduplicator import Deduplicator
from mdf.operators import BatchContext, Operator
from mdf.plugin_set import Plugins
from mdf.recipe import Recipe
from mdf.resolve import build_operator
from mdf.state import KeyState

WARMUP_ROWS = 64


@dataclass(frozen=True)
class StageCost:
    """What one stage cost on the sample."""

    name: str
    rows_in: int
    seconds: float
    peak_growth_bytes: float
    input_bytes: float

    @property
    def seconds_per_row(self) -> float:
        return self.seconds / self.rows_in if self.rows_in else 0.0

    @property
    def growth_per_row(self) -> float:
        return self.peak_growth_bytes / self.rows_in if self.rows_in else 0.0

    @property
    def amplification(self) -> float:
        """(input + peak growth) / input: how many times its payload a row takes while the stage runs."""
        return (self.input_bytes + self.peak_growth_bytes) / self.input_bytes if self.input_bytes else 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "stage": self.name,
            "rows_in": self.rows_in,
            "us_per_row": round(self.seconds_per_row * 1e6, 3),
            "peak_growth_per_row_bytes": round(self.growth_per_row),
            "amplification": round(self.amplification, 3),
        }


def measure_stages(recipe: Recipe, plugins: Plugins, table: pa.Table, repeats: int = 3) -> list[StageCost]:
    """Run every stage in order on ``table`` (one batch), each stage on the rows the previous one kept.

    The pass runs ``repeats`` times (each with fresh deduplication state, so it sees the same rows) and each
    stage reports the median time and median peak growth: one pass over a small sample is noisy.
    """
    stages = [
        [build_operator(plugins, op, f"stages[{i}].operators[{j}]") for j, op in enumerate(stage.operators)]
        for i, stage in enumerate(recipe.stages)
    ]
    batch = _one_batch(table)
    _run_pass(recipe, stages, batch.slice(0, WARMUP_ROWS))
    passes = [_run_pass(recipe, stages, batch) for _ in range(max(1, repeats))]
    return [
        StageCost(
            runs[0].name,
            runs[0].rows_in,
            float(np.median([c.seconds for c in runs])),
            float(np.median([c.peak_growth_bytes for c in runs])),
            runs[0].input_bytes,
        )
        for runs in zip(*passes, strict=True)
    ]


def _run_pass(recipe: Recipe, stages: list[list[Operator]], batch: pa.RecordBatch) -> list[StageCost]:
    _attach_fresh_state(stages)  # a pass must not see an earlier pass's keys as duplicates
    costs = []
    for spec, ops in zip(recipe.stages, stages, strict=True):
        cost, batch = _measure_stage(spec.name, ops, batch)
        costs.append(cost)
    return costs


def _attach_fresh_state(stages: list[list[Operator]]) -> None:
    state = KeyState.local()
    for op in (op for ops in stages for op in ops):
        if isinstance(op, Deduplicator):
            op.attach_state(state)


def _one_batch(table: pa.Table) -> pa.RecordBatch:
    batches = table.combine_chunks().to_batches()
    return batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)


def _measure_stage(name: str, ops: list[Operator], batch: pa.RecordBatch) -> tuple[StageCost, pa.RecordBatch]:
    input_bytes = float(row_payload_bytes(batch).sum())
    rows_in = batch.num_rows
    rss_before = _rss_bytes()
    hwm_reset = _reset_peak_rss()
    ctx = BatchContext(shard_id="plan-sample", batch_index=0, row_offset=0)
    with _ArrowPeak() as arrow:
        start = time.perf_counter()
        for op in ops:
            if batch.num_rows == 0:
                break
            out, _ = op.process(batch, ctx)
            arrow.sample()  # input and output both alive: the floor of any operator's peak
            batch = out
        seconds = time.perf_counter() - start
    rss_growth = max(0, _peak_rss_bytes() - rss_before) if hwm_reset else 0
    return StageCost(name, rows_in, seconds, float(max(rss_growth, arrow.growth)), input_bytes), batch


class _ArrowPeak:
    """Highest Arrow allocation above the level at entry, polled from a thread while the block runs."""

    def __enter__(self) -> _ArrowPeak:
        self.before = self.peak = pa.total_allocated_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="mdf-plan-peak", daemon=True)
        self._thread.start()
        return self

    def sample(self) -> None:
        self.peak = max(self.peak, pa.total_allocated_bytes())

    def _poll(self) -> None:
        while not self._stop.wait(0.001):
            self.sample()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    @property
    def growth(self) -> int:
        return max(0, self.peak - self.before)


def _status_kb(field_name: str) -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _rss_bytes() -> int:
    return _status_kb("VmRSS")


def _peak_rss_bytes() -> int:
    return _status_kb("VmHWM")


def _reset_peak_rss() -> bool:
    """Reset the resident high-water mark (Linux 4.0+); False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False
