"""One pass of the inline executor over its shards: the shard threads, their shared state, and the failure path.

Each worker thread runs shards through its own :class:`~mdf.executor.shard.ShardRunner` (its own operator
instances, as a Ray replica has; the one shard loop of every executor). :class:`InlinePass` holds what the
threads share (the :class:`~mdf.executor.batches.PassCounter` behind a lock, the byte budget, the dedup
turnstile), drives the threads and their commits, and on a failure stops every reader and writer and records
the shards that were committed anyway (:meth:`InlinePass.run`).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any

from mdf.executor.base import Outputs
from mdf.executor.batches import BatchDone, BatchRead, PassCounter
from mdf.executor.inline_metrics import InlineMetrics
from mdf.executor.passes import dedup_positions, namespace
from mdf.executor.shard import WRITE_QUEUE, ShardRunner, Sink
from mdf.executor.threads import Aborted, ByteBudget, Turnstile
from mdf.io.base import Shard
from mdf.metrics import RunMetrics
from mdf.plan import Plan
from mdf.state import Checkpoint, KeyState


class InlinePass:
    """One pass: ``workers`` shard threads, each with its own shard runner (operators) and writer threads."""

    def __init__(
        self, plan: Plan, workers: int, bytes_in_flight: int, state: KeyState | None, checkpoint: Checkpoint | None
    ) -> None:
        self.plan, self.state, self.checkpoint = plan, state, checkpoint
        self.workers = workers
        self.outputs = Outputs.build(plan)
        self.stats = InlineMetrics(workers=self.workers)
        self.metrics = RunMetrics(executor="inline", shards=len(plan.shards), executor_metrics=self.stats)
        self.counter = PassCounter(self.metrics, plan.recipe.stages)
        gates = [
            namespace(i, j, plan.recipe.stages[i].operators[j].name)
            for i, j, mode in dedup_positions(plan)
            if mode == "streaming"
        ]
        self.turns = Turnstile(gates, [s.index for s in plan.shards]) if gates else None
        self.budget = ByteBudget(bytes_in_flight)
        # a shard's writer queue holds two batches (what the batch-size planner counts on per pipeline), except
        # behind a streaming dedup: there a long queue, bounded by bytes, lets the dedup's turn run ahead of the
        # writer to the end of the shard, so the next shard's turn (and its writer) can start
        self.queue = WRITE_QUEUE if self.turns is None else 1 << 30
        self.lock = threading.Lock()
        self.local = threading.local()
        self.runners: list[ShardRunner] = []
        self.recorded: set[str] = set()

    def runner(self) -> ShardRunner:
        """This worker thread's shard runner, with its own operator instances (built on its first shard)."""
        local = self.local
        if not hasattr(local, "runner"):
            local.runner = ShardRunner.for_plan(self.plan, self.state, self.count, self.outputs, self.budget,
                                                self.turns, self.queue)  # fmt: skip
            with self.lock:
                self.runners.append(local.runner)
        return local.runner  # type: ignore[no-any-return]

    def count(self, read: BatchRead, done: BatchDone) -> None:
        """A shard thread's batch, counted at once (progress, the report's timeline)."""
        if self.stats.first_batch_unix_s is None:  # start-up cost, in benchmarks
            self.stats.first_batch_unix_s = time.time()
        with self.lock:
            self.counter.count(read, done)

    def run_shard(self, shard: Shard) -> Sink:
        return self.runner().run(shard)

    def record(self, shard: Shard) -> None:
        """A committed shard joins the checkpoint (once)."""
        if shard.id not in self.recorded:
            self.recorded.add(shard.id)
            with self.lock:
                self.counter.committed(shard.id, self.checkpoint)

    def run(self, progress: Any) -> RunMetrics:
        """Every shard through :meth:`run_shard` on ``workers`` threads; commits recorded as they finish."""
        plan, metrics = self.plan, self.metrics
        if progress is not None:
            progress.start(plan, [s.name for s in plan.recipe.stages])
        start = time.perf_counter()
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="mdf-shard")
        try:
            running: dict[Future[Any], Shard] = {pool.submit(self.run_shard, s): s for s in plan.shards}
            while running:
                done, _ = wait(running, timeout=0.2, return_when=FIRST_EXCEPTION)
                failure: BaseException | None = None
                for f in done:  # every finished future first: a commit done beside a failure still counts
                    shard = running.pop(f)
                    if f.exception() is not None:
                        failure = failure or f.exception()
                        continue
                    result = f.result()
                    if isinstance(result, Sink):  # the shard's thread is done: now wait for its commit
                        assert result.committed is not None
                        running[result.committed] = shard
                    else:
                        self.record(shard)
                if failure is not None:
                    raise failure
                if progress is not None:
                    progress.update_counts(metrics)
        except BaseException as exc:
            self._abort(pool, exc)
            raise
        finally:
            if progress is not None:
                progress.stop()
        pool.shutdown(wait=True)
        self.stats.peak_bytes_in_flight = self.budget.peak
        return self.counter.finish(time.perf_counter() - start)

    def _abort(self, pool: ThreadPoolExecutor, exc: BaseException) -> None:
        """Stop readers and writers, keep what was committed (``--resume`` skips it), name the first cause."""
        self.budget.abort()
        if self.turns is not None:
            self.turns.abort()
        pool.shutdown(wait=True, cancel_futures=True)
        sinks = [sink for runner in self.runners for sink in runner.sinks]
        for sink in sinks:  # no writer may still be writing when the open part files are dropped
            sink.stop()
        by_id = {s.id: s for s in self.plan.shards}
        for sink in sinks:  # shards whose part files are committed need not be redone by --resume
            if sink.committed_ok():
                self.record(by_id[sink.shard])
        self.outputs.close()
        failed = next((s.error for s in sinks if s.error is not None), None)
        if isinstance(exc, Aborted) and failed is not None:  # a writer failed first: report its error
            raise failed from None
