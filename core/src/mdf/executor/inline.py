"""The inline executor: this machine, every core, no cluster. The default, and the reference semantics.

``workers`` shards run at once, each in its own thread: read (one batch ahead), operators, and a writer thread
of its own, so decode, operators and zstd encoding of several shards overlap (Arrow releases the GIL in all
three). What a sequential run gives is kept exactly:

* each shard's part file is written by one thread in batch order, so it holds the same rows in the same order;
* streaming deduplicators see batches in input order through a :class:`~mdf.executor.threads.Turnstile` (only
  the deduplicator itself waits for its turn; reading, filtering and writing of later shards go on), so they
  keep the same rows as a one-thread run;
* each worker thread builds its own operator instances (as a Ray replica does), so operators need not be
  thread-safe; their counters are added up at the end.

Batches waiting to be written are bounded in bytes (``max_bytes_in_flight``): a slow disk holds back readers
instead of filling memory. One pass over the shards is :class:`~mdf.executor.inline_pass.InlinePass`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from mdf.cpus import usable_cores
from mdf.executor.api import Executor, ExecutorParams, auto_workers
from mdf.executor.inline_metrics import InlineMetrics
from mdf.executor.inline_pass import InlinePass
from mdf.executor.passes import run_passes
from mdf.executor.threads import auto_bytes_in_flight
from mdf.metrics import RunMetrics
from mdf.plan import Plan
from mdf.state import Checkpoint, KeyState


class InlineParams(ExecutorParams):
    """Parameters of the inline executor (``executor: {type: inline, ...}``)."""

    workers: int | Literal["auto"] = Field(
        "auto", description="shards processed at once; auto = one per core this process may use (affinity, quota)"
    )
    max_bytes_in_flight: int | None = Field(
        None, gt=0, description="bytes of batches waiting to be written; none = 1/8 of memory (256 MiB-2 GiB)"
    )

    def worker_count(self, shards: int) -> int:
        if self.workers == "auto":
            return auto_workers(usable_cores(), shards)
        return max(1, min(self.workers, shards))


class InlineExecutor(Executor):
    """Runs on this machine: several shards at once in threads, same output as a one-thread run."""

    name = "inline"
    Params = InlineParams
    Metrics = InlineMetrics

    params: InlineParams

    def summary(self) -> str:
        n = self.params.worker_count(len(self.plan.shards))
        return f"{n} worker thread{'s' if n > 1 else ''} on this machine"

    def run(self, progress: Any = None) -> RunMetrics:
        return run_passes(self.plan, self._run_pass, KeyState.local, progress)

    def _run_pass(self, plan: Plan, state: KeyState | None, checkpoint: Checkpoint | None, progress: Any) -> RunMetrics:
        budget = self.params.max_bytes_in_flight or auto_bytes_in_flight()
        workers = self.params.worker_count(len(plan.shards))
        return InlinePass(plan, workers, budget, state, checkpoint).run(progress)
