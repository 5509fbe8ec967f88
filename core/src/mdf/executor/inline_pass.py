"""One pass of the inline executor over its shards: the state the shard threads share, as one object.

:class:`InlinePass` holds what the shard threads share (the counters, the tally, the writer sinks, the byte
budget, the dedup turnstile) and does the three things a pass does: run a shard (read -> operators -> count
-> write, :meth:`run_shard`), drive the shard threads and their commits, and on a failure stop every reader
and writer and record the shards that were committed anyway (:meth:`run`). The per-batch bookkeeping is
:func:`mdf.executor.batches.count_read` and :func:`~mdf.executor.batches.count_done`, the same calls Ray's
driver makes for the messages its actors send.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from mdf.deduplicator import Deduplicator
from mdf.executor.base import Outputs, build_stage, run_chain
from mdf.executor.batches import BatchDone, count_done, count_read, read_batch
from mdf.executor.failures import in_stage
from mdf.executor.inline_metrics import InlineMetrics
from mdf.executor.passes import attach_state, dedup_positions, namespace
from mdf.executor.plan import Plan
from mdf.executor.threads import Aborted, ByteBudget, Turnstile, prefetch
from mdf.io.base import Shard
from mdf.metrics import OperatorMetrics, RunMetrics, StageMetrics
from mdf.operators import BatchContext, Operator
from mdf.state import Checkpoint, KeyState
from mdf.tally import ShardTally

if TYPE_CHECKING:
    from mdf.executor.inline import InlineParams

WRITE_QUEUE = 2


class ShardSink:
    """A shard's writer thread: batches in order, then the atomic commit (refused after a failed write)."""

    def __init__(self, outputs: Outputs, shard: Shard, budget: ByteBudget, queue: int) -> None:
        self.outputs, self.shard, self.budget = outputs, shard, budget
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"mdf-write-{shard.id}")
        self.error: BaseException | None = None
        self.committed: Future[list[str]] | None = None
        self.queued = threading.Semaphore(queue)

    def write(self, kept: pa.RecordBatch, rejected: list[pa.RecordBatch]) -> None:
        nbytes = kept.nbytes + sum(r.nbytes for r in rejected)
        self.queued.acquire()
        self.budget.acquire(nbytes)
        self.pool.submit(self._write, kept, rejected, nbytes)

    def _write(self, kept: pa.RecordBatch, rejected: list[pa.RecordBatch], nbytes: int) -> None:
        try:
            if self.error is None:
                self.outputs.writer.write(kept, self.shard.id)
                if self.outputs.rejected is not None:
                    for r in rejected:
                        self.outputs.rejected.write(r, self.shard.id)
        except BaseException as exc:
            self.error = exc
            self.budget.abort()  # stop every reader: the run fails
        finally:
            self.budget.release(nbytes)
            self.queued.release()

    def commit(self) -> Future[list[str]]:
        self.committed = self.pool.submit(self._commit)
        self.pool.shutdown(wait=False)
        return self.committed

    def _commit(self) -> list[str]:
        if self.error is not None:
            raise self.error
        return self.outputs.commit(self.shard.id)


class InlinePass:
    """One pass: ``workers`` shard threads, each with its own operator instances and writer thread."""

    def __init__(
        self, plan: Plan, params: InlineParams, bytes_in_flight: int, state: KeyState | None,
        checkpoint: Checkpoint | None,
    ) -> None:  # fmt: skip
        self.plan, self.state, self.checkpoint = plan, state, checkpoint
        self.workers = params.worker_count(len(plan.shards))
        self.outputs = Outputs.build(plan)
        self.stats = InlineMetrics(workers=self.workers)
        self.metrics = RunMetrics(executor="inline", shards=len(plan.shards), executor_metrics=self.stats)
        self.gates = [
            namespace(i, j, plan.recipe.stages[i].operators[j].name)
            for i, j, mode in dedup_positions(plan)
            if mode == "streaming"
        ]
        self.turns = Turnstile(self.gates, [s.index for s in plan.shards]) if self.gates else None
        self.budget = ByteBudget(bytes_in_flight)
        # a shard's writer queue holds two batches (what the batch-size planner counts on per pipeline), except
        # behind a streaming dedup: there a long queue, bounded by bytes, lets the dedup's turn run ahead of the
        # writer to the end of the shard, so the next shard's turn (and its writer) can start
        self.queue = WRITE_QUEUE if self.turns is None else 1 << 30
        self.fail_on_damage = plan.recipe.on_damaged_input == "fail"
        self.lock = threading.Lock()
        self.local = threading.local()
        # Each shard counts into operator counters of its own (swapped into the worker's operators), so a
        # checkpoint holds exactly the committed shards' counts; ``finished`` adds up the shards that are done.
        self.tally = ShardTally()
        self.live: dict[str, list[list[OperatorMetrics]]] = {}
        self.finished: list[OperatorMetrics] = []
        self.sinks: list[ShardSink] = []
        self.recorded: set[str] = set()

    def stages(self) -> list[list[Operator]]:
        """This worker thread's own operator instances (built on its first shard)."""
        local = self.local
        if not hasattr(local, "stages"):
            local.stages = [build_stage(self.plan.plugins, s, i) for i, s in enumerate(self.plan.recipe.stages)]
            for i, ops in enumerate(local.stages):
                attach_state(i, ops, self.state)
        return local.stages

    def gate(self, step: Any, ctx: BatchContext) -> AbstractContextManager[Any]:
        """A streaming deduplicator's turn: batches in input order, whatever thread reads them."""
        if self.turns is not None and isinstance(step, Deduplicator) and step.namespace in self.gates:
            return self.turns.turn(step.namespace, ctx.shard_index, ctx.batch_index)
        return nullcontext()

    def run_shard(self, shard: Shard) -> ShardSink:
        """Read -> operators (stage by stage) -> count -> write, batch by batch; then the shard's commit."""
        plan, turns, metrics, lock = self.plan, self.turns, self.metrics, self.lock
        sink = ShardSink(self.outputs, shard, self.budget, self.queue)
        with lock:
            self.sinks.append(sink)
        ops = self.stages()
        counted = _fresh_counters(ops)
        with lock:
            self.live[shard.id] = counted
        keep_rejected = self.outputs.rejected is not None
        offset = batches = 0
        for index, batch in enumerate(prefetch(plan.reader.read(shard, plan.batch_rows))):
            if self.stats.first_batch_unix_s is None:  # start-up cost, in benchmarks
                self.stats.first_batch_unix_s = time.time()
            read, kept, rejected = read_batch(shard, index, offset, batch)
            by_reader = read.rows - kept.num_rows  # rows the reader rejected
            ctx = read.context()
            for spec, stage_ops in zip(plan.recipe.stages, ops, strict=True):  # stage by stage, as on Ray
                with in_stage(spec.name):  # (filters fuse within a stage only)
                    kept, more = run_chain(stage_ops, kept, ctx, keep_rejected, self.gate if turns else None)
                rejected += more
            if turns is not None:
                turns.passed(shard.index, index)
            offset += read.rows - by_reader  # (Ray's loaders count the reader's rejections too)
            done = BatchDone(shard.id, kept.num_rows, sum(r.num_rows for r in rejected), by_reader)
            with lock:
                count_read(metrics, self.tally, read, self.fail_on_damage)
                count_done(metrics, self.tally, done, [_cumulative(self.finished, self.live.values())])
            sink.write(kept, rejected)
            batches = index + 1
        if turns is not None:
            turns.end_shard(shard.index, batches)
        flat = [m for stage_counts in counted for m in stage_counts]
        with lock:  # the shard's operator counters join its tally (Ray's come with each batch)
            self.tally.add(shard.id, 0, 0, flat)
            del self.live[shard.id]
            if not self.finished:
                self.finished.extend(OperatorMetrics(m.name, m.kind) for m in flat)
            for total, m in zip(self.finished, flat, strict=True):
                total.merge(m)
        sink.commit()
        return sink

    def record(self, shard: Shard) -> None:
        """A committed shard joins the checkpoint (once)."""
        if self.checkpoint is not None and shard.id not in self.recorded:
            self.recorded.add(shard.id)
            with self.lock:
                committed = self.tally.commit(shard.id)
            self.checkpoint.shard_done(shard.id, committed)

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
                    if isinstance(result, ShardSink):  # the shard's thread is done: now wait for its commit
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
        metrics.wall_s = time.perf_counter() - start
        self.stats.peak_bytes_in_flight = self.budget.peak
        metrics.stages = _stages(plan, self.finished)
        return metrics

    def _abort(self, pool: ThreadPoolExecutor, exc: BaseException) -> None:
        """Stop readers and writers, keep what was committed (``--resume`` skips it), name the first cause."""
        self.budget.abort()
        if self.turns is not None:
            self.turns.abort()
        pool.shutdown(wait=True, cancel_futures=True)
        for sink in self.sinks:  # no writer may still be writing when the open part files are dropped
            sink.pool.shutdown(wait=True, cancel_futures=True)
        for sink in self.sinks:  # shards whose part files are committed need not be redone by --resume
            c = sink.committed
            if c is not None and c.done() and not c.cancelled() and c.exception() is None:
                self.record(sink.shard)
        self.outputs.close()
        failed = next((s.error for s in self.sinks if s.error is not None), None)
        if isinstance(exc, Aborted) and failed is not None:  # a writer failed first: report its error
            raise failed from None


def _fresh_counters(ops: list[list[Operator]]) -> list[list[OperatorMetrics]]:
    """Give the worker's operators new counters for the shard it starts; return them (one worker, one shard)."""
    counted = []
    for stage_ops in ops:
        row = []
        for op in stage_ops:
            op.metrics = OperatorMetrics(op.metrics.name, op.metrics.kind)
            row.append(op.metrics)
        counted.append(row)
    return counted


def _cumulative(finished: list[OperatorMetrics], live: Any) -> list[SimpleNamespace]:
    """Every operator's rows in/out and time so far, over finished shards and the shards in flight."""
    pieces = [[m for stage_counts in counted for m in stage_counts] for counted in live]
    width = max([len(finished), *(len(p) for p in pieces)])
    out = []
    for k in range(width):
        ms = [p[k] for p in pieces] + ([finished[k]] if k < len(finished) else [])
        out.append(
            SimpleNamespace(
                rows_in=sum(m.rows_in for m in ms),
                rows_out=sum(m.rows_out for m in ms),
                time_s=sum(m.time_s for m in ms),
            )
        )
    return out


def _stages(plan: Plan, finished: list[OperatorMetrics]) -> list[StageMetrics]:
    """The finished shards' operator counters, per stage (named from the recipe when no shard ran)."""
    out, k = [], 0
    for spec in plan.recipe.stages:
        ops = []
        for op_spec in spec.operators:
            ops.append(finished[k] if k < len(finished) else OperatorMetrics(op_spec.name, "?"))
            k += 1
        out.append(StageMetrics(spec.name, ops))
    return out
