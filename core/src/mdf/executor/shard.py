"""The shard runner: prefetch -> read batch -> stages -> done -> sink -> commit, the one loop of every executor.

:class:`ShardRunner` runs one shard at a time through three pieces that the Ray chain also uses apart:

* the read step, :func:`mdf.executor.batches.shard_batches` (the reader's batches split into kept rows and the
  reader's rejections, with the one offset rule), read one batch ahead in a thread (:func:`prefetch`);
* :class:`Stages`, a worker's own operator instances for the recipe's stages, which runs a batch through them
  stage by stage and hands back *that batch's* operator counters (the one counter regime: counters travel with
  their batch to whoever counts, so a batch retried after a crash counts once and a shard's counts are exactly
  its batches');
* :class:`Sink`, a shard's writer thread: batches in order, at most ``queue`` waiting and their bytes held in a
  :class:`~mdf.executor.threads.ByteBudget`, so a slow disk holds back the reader instead of filling memory;
  then the atomic commit, refused after a failed write.

Each batch's :class:`~mdf.executor.batches.BatchRead` and :class:`~mdf.executor.batches.BatchDone` go to
``on_batch`` before the batch is handed to the sink: the inline executor counts them at once (under its lock),
Ray's shard actor keeps them and returns them with the shard (:class:`~mdf.executor.batches.ShardDone`). Inline
threads and the Ray actor run this same object, so inline/Ray equality follows from the structure.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pyarrow as pa

from mdf.deduplicator import Deduplicator
from mdf.executor.base import Outputs, build_stage, run_chain
from mdf.executor.batches import BatchDone, BatchRead, shard_batches
from mdf.executor.failures import in_stage
from mdf.executor.passes import attach_state
from mdf.executor.threads import ByteBudget, Turnstile, auto_bytes_in_flight, prefetch
from mdf.io.base import Reader, Shard
from mdf.metrics import OperatorMetrics
from mdf.operators import BatchContext, Operator
from mdf.plan import Plan
from mdf.plugin_set import Plugins
from mdf.recipe import StageSpec
from mdf.state import KeyState

WRITE_QUEUE = 2
"""Batches a shard's writer thread may hold: what the batch-size planner counts on per pipeline."""

OnBatch = Callable[[BatchRead, BatchDone], None]


class Stages:
    """A worker's operators for some of the recipe's stages (all of them, or a fused group's), built in the
    worker; :meth:`process` runs a batch through them stage by stage (filters fuse within a stage only).

    ``turns``: the inline executor's turnstile, through which streaming deduplicators take batches in input
    order. Busy time per stage and the first batch's CPU are kept for Ray's utilisation and warm-up figures."""

    def __init__(
        self,
        plugins: Plugins,
        stages: list[tuple[int, StageSpec]],
        key_state: Any = None,
        keep_rejected: bool = True,
        turns: Turnstile | None = None,
    ) -> None:
        self.keep_rejected = keep_rejected
        self.turns = turns
        self.names = [stage.name for _, stage in stages]
        self.operators: list[list[Operator]] = [build_stage(plugins, stage, index) for index, stage in stages]
        for (index, _), ops in zip(stages, self.operators, strict=True):
            attach_state(index, ops, key_state)  # in process, or a KeyState holding bucket actor handles
        self.started = time.perf_counter()
        self.cpu0 = time.process_time()  # the whole process: rayon threads and Ray's transfers count too
        self.stage_busy_s = [0.0] * len(stages)
        self.batches = 0
        self.rows = 0
        self.first: tuple[float, int] | None = None  # (CPU seconds through the first batch, its rows)

    def process(
        self, read: BatchRead, kept: pa.RecordBatch, rejected: list[pa.RecordBatch]
    ) -> tuple[pa.RecordBatch, list[pa.RecordBatch], list[OperatorMetrics]]:
        """``(kept, rejected + what the operators rejected, this batch's counters of every operator)``."""
        ctx = read.context()
        counters: list[OperatorMetrics] = []
        gate = self.gate if self.turns is not None else None
        for k, operators in enumerate(self.operators):
            start = time.perf_counter()
            with in_stage(self.names[k]):
                kept, more = run_chain(operators, kept, ctx, self.keep_rejected, gate)
            rejected = rejected + more
            for op in operators:  # this batch's counts go with it; the operator starts afresh
                counters.append(op.metrics)
                op.metrics = OperatorMetrics(op.name, op.kind)
            self.stage_busy_s[k] += time.perf_counter() - start
        if self.turns is not None:
            self.turns.passed(read.shard_index, read.index)
        self.batches += 1
        self.rows += read.rows
        if self.first is None:
            self.first = (time.process_time() - self.cpu0, read.rows)
        return kept, rejected, counters

    def gate(self, step: Any, ctx: BatchContext) -> AbstractContextManager[Any]:
        """A streaming deduplicator's turn: batches in input order, whatever thread reads them."""
        assert self.turns is not None
        if isinstance(step, Deduplicator) and step.namespace in self.turns.names:
            return self.turns.turn(step.namespace, ctx.shard_index, ctx.batch_index)
        return nullcontext()


class Sink:
    """A shard's writer thread: batches in the order given, then the atomic commit (refused after a failed
    write). :meth:`write` waits while ``queue`` batches are waiting or the budget is spent."""

    def __init__(self, outputs: Outputs, shard: str, budget: ByteBudget, queue: int = WRITE_QUEUE) -> None:
        self.outputs, self.shard, self.budget = outputs, shard, budget
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"mdf-write-{shard}")
        self.error: BaseException | None = None
        self.committed: Future[list[str]] | None = None
        self.queued = threading.Semaphore(queue)
        self.busy_s = 0.0

    def write(self, kept: pa.RecordBatch, rejected: list[pa.RecordBatch]) -> None:
        if self.error is not None:  # the run fails: say why now rather than at the commit
            raise self.error
        nbytes = kept.nbytes + sum(r.nbytes for r in rejected)
        self.queued.acquire()
        try:
            self.budget.acquire(nbytes)
        except BaseException:
            self.queued.release()
            cause = self.error or self.budget.cause
            if cause is not None:  # a writer failed while this waited: its error (a full disk), not "Aborted"
                raise cause from None
            raise
        self.pool.submit(self._write, kept, rejected, nbytes)

    def _write(self, kept: pa.RecordBatch, rejected: list[pa.RecordBatch], nbytes: int) -> None:
        start = time.perf_counter()
        try:
            if self.error is None:
                self.outputs.writer.write(kept, self.shard)
                if self.outputs.rejected is not None:
                    for r in rejected:
                        self.outputs.rejected.write(r, self.shard)
        except BaseException as exc:
            self.error = exc
            self.budget.abort(exc)  # stop every reader sharing the budget: the run fails
        finally:
            self.busy_s += time.perf_counter() - start
            self.budget.release(nbytes)
            self.queued.release()

    def commit(self) -> Future[list[str]]:
        """Commit once every batch is written (in the writer thread); the future holds the committed paths."""
        self.committed = self.pool.submit(self._commit)
        self.pool.shutdown(wait=False)
        return self.committed

    def _commit(self) -> list[str]:
        if self.error is not None:
            raise self.error
        return self.outputs.commit(self.shard)

    def stop(self) -> None:
        """Wait for the writer thread, dropping what it has not started (the run failed)."""
        self.pool.shutdown(wait=True, cancel_futures=True)

    def committed_ok(self) -> bool:
        c = self.committed
        return c is not None and c.done() and not c.cancelled() and c.exception() is None


class ShardRunner:
    """Runs shards one at a time: prefetch -> read batch -> stages -> done -> sink -> commit.

    ``on_batch(read, done)`` is told every batch before it is handed to the sink. :meth:`run` returns the
    shard's :class:`Sink` once every batch is handed over; its ``committed`` future ends with the commit, so the
    caller may start the next shard while the last batches are written."""

    def __init__(
        self,
        reader: Reader,
        batch_rows: int,
        stages: Stages,
        outputs: Outputs,
        budget: ByteBudget,
        on_batch: OnBatch,
        fail_on_damage: bool = False,
        queue: int = WRITE_QUEUE,
    ) -> None:
        self.reader, self.batch_rows, self.stages, self.outputs = reader, batch_rows, stages, outputs
        self.budget, self.on_batch, self.fail_on_damage, self.queue = budget, on_batch, fail_on_damage, queue
        self.sinks: list[Sink] = []
        self._lock = threading.Lock()

    @classmethod
    def for_plan(
        cls,
        plan: Plan,
        state: KeyState | None,
        on_batch: OnBatch,
        outputs: Outputs | None = None,
        budget: ByteBudget | None = None,
        turns: Turnstile | None = None,
        queue: int = WRITE_QUEUE,
    ) -> ShardRunner:
        """A runner of every stage of ``plan``'s recipe, with operators of its own (build one per thread or
        process), writing to ``outputs`` (default: the recipe's writers, built now), within ``budget``
        (default: 1/8 of memory, 256 MiB-2 GiB)."""
        outputs = outputs or Outputs.build(plan)
        stages = Stages(plan.plugins, list(enumerate(plan.recipe.stages)), state, outputs.rejected is not None, turns)
        budget = budget or ByteBudget(auto_bytes_in_flight())
        fail = plan.recipe.on_damaged_input == "fail"
        return cls(plan.reader, plan.batch_rows, stages, outputs, budget, on_batch, fail, queue)

    def batches(self, shard: Shard) -> Iterator[tuple[BatchRead, pa.RecordBatch, list[pa.RecordBatch]]]:
        """The shard's batches, one read ahead in a thread so decoding overlaps the operators."""
        return prefetch(shard_batches(self.reader, shard, self.batch_rows, self.fail_on_damage))

    def run(self, shard: Shard) -> Sink:
        sink = Sink(self.outputs, shard.id, self.budget, self.queue)
        with self._lock:
            self.sinks.append(sink)
        turns, batches = self.stages.turns, 0
        for read, kept, rejected in self.batches(shard):
            kept, rejected, counters = self.stages.process(read, kept, rejected)
            self.on_batch(read, BatchDone.of(read, kept, rejected, counters))
            sink.write(kept, rejected)
            batches += 1
        if turns is not None:
            turns.end_shard(shard.index, batches)
        sink.commit()
        return sink

    def run_all(self, shard: Shard) -> list[str]:
        """Run ``shard`` and wait for its commit: the committed paths."""
        committed = self.run(shard).committed
        assert committed is not None
        return committed.result()

    def stop(self) -> None:
        """After a failure: wait for every writer thread, then drop the part files not committed."""
        with self._lock:
            sinks = list(self.sinks)
        for sink in sinks:
            sink.stop()
        self.outputs.close()
