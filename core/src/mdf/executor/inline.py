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
instead of filling memory.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from types import SimpleNamespace
from typing import Any, Literal

import pyarrow as pa
from pydantic import Field

from mdf.deduplicator import Deduplicator
from mdf.executor.api import Executor, ExecutorParams, auto_workers
from mdf.executor.base import Outputs, build_stage, run_chain
from mdf.executor.batches import count_read, read_batch
from mdf.executor.failures import in_stage
from mdf.executor.inline_metrics import InlineMetrics
from mdf.executor.passes import attach_state, dedup_positions, namespace, run_passes
from mdf.executor.plan import Plan
from mdf.executor.threads import Aborted, ByteBudget, Turnstile, prefetch
from mdf.io.base import Shard
from mdf.metrics import OperatorMetrics, RunMetrics, StageMetrics
from mdf.operators import BatchContext, Operator
from mdf.state import Checkpoint, KeyState
from mdf.tally import ShardTally

WRITE_QUEUE = 2


def auto_bytes_in_flight() -> int:
    """1/8 of the machine's memory, between 256 MiB and 2 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return int(min(max(total // 8, 256 << 20), 2 << 30))


class InlineParams(ExecutorParams):
    """Parameters of the inline executor (``executor: {type: inline, ...}``)."""

    workers: int | Literal["auto"] = Field("auto", description="shards processed at once; auto = one per CPU core")
    max_bytes_in_flight: int | None = Field(
        None, gt=0, description="bytes of batches waiting to be written; none = 1/8 of memory (256 MiB-2 GiB)"
    )

    def worker_count(self, shards: int) -> int:
        if self.workers == "auto":
            return auto_workers(os.cpu_count() or 1, shards)
        return max(1, min(self.workers, shards))


class _ShardSink:
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
        workers = self.params.worker_count(len(plan.shards))
        outputs = Outputs.build(plan)
        keep_rejected = outputs.rejected is not None
        stats = InlineMetrics(workers=workers)
        metrics = RunMetrics(executor="inline", shards=len(plan.shards), executor_metrics=stats)
        gates = [
            namespace(i, j, plan.recipe.stages[i].operators[j].name)
            for i, j, mode in dedup_positions(plan)
            if mode == "streaming"
        ]
        turns = Turnstile(gates, [s.index for s in plan.shards]) if gates else None
        budget = ByteBudget(self.params.max_bytes_in_flight or auto_bytes_in_flight())
        # a shard's writer queue holds two batches (what the partition planner counts on per pipeline), except
        # behind a streaming dedup: there a long queue, bounded by bytes, lets the dedup's turn run ahead of the
        # writer to the end of the shard, so the next shard's turn (and its writer) can start
        queue = WRITE_QUEUE if turns is None else 1 << 30
        lock = threading.Lock()
        local = threading.local()
        fail_on_damage = plan.recipe.on_damaged_input == "fail"
        # Each shard counts into operator counters of its own (swapped into the worker's operators), so a
        # checkpoint holds exactly the committed shards' counts; ``finished`` adds up the shards that are done.
        tally = ShardTally()
        live: dict[str, list[list[OperatorMetrics]]] = {}
        finished: list[OperatorMetrics] = []

        def stages() -> list[list[Operator]]:
            """This worker thread's own operator instances (built on its first shard)."""
            if not hasattr(local, "stages"):
                local.stages = [build_stage(plan.plugins, s, i) for i, s in enumerate(plan.recipe.stages)]
                for i, ops in enumerate(local.stages):
                    attach_state(i, ops, state)
            return local.stages

        def gate(step: Any, ctx: BatchContext) -> AbstractContextManager[Any]:
            if turns is not None and isinstance(step, Deduplicator) and step.namespace in gates:
                return turns.turn(step.namespace, ctx.shard_index, ctx.batch_index)
            return nullcontext()

        sinks: list[_ShardSink] = []

        def run_shard(shard: Shard) -> _ShardSink:
            sink = _ShardSink(outputs, shard, budget, queue)
            with lock:
                sinks.append(sink)
            ops = stages()
            counted = _fresh_counters(ops)
            with lock:
                live[shard.id] = counted
            offset = batches = written = dropped = 0
            for index, batch in enumerate(prefetch(plan.reader.read(shard, plan.batch_rows))):
                if stats.first_batch_unix_s is None:  # start-up cost, in benchmarks
                    stats.first_batch_unix_s = time.time()
                read, kept, rejected = read_batch(shard, index, offset, batch)
                by_reader = read.rows - kept.num_rows  # rows the reader rejected
                ctx = read.context()
                for spec, stage_ops in zip(plan.recipe.stages, ops, strict=True):  # stage by stage, as on Ray
                    with in_stage(spec.name):  # (filters fuse within a stage only)
                        kept, more = run_chain(stage_ops, kept, ctx, keep_rejected, gate if turns else None)
                    rejected += more
                if turns is not None:
                    turns.passed(shard.index, index)
                offset += read.rows - by_reader  # (Ray's loaders count the reader's rejections too)
                n_rej = sum(r.num_rows for r in rejected)
                written, dropped = written + kept.num_rows, dropped + n_rej
                with lock:
                    count_read(metrics, tally, read, fail_on_damage)
                    metrics.rows_written += kept.num_rows
                    metrics.rows_rejected += n_rej
                    metrics.observe(  # report: shard rows, per-operator counts over time (all workers)
                        shard.id, kept.num_rows, n_rej, by_reader,
                        [_cumulative(finished, live.values())],
                    )  # fmt: skip
                sink.write(kept, rejected)
                batches = index + 1
            if turns is not None:
                turns.end_shard(shard.index, batches)
            flat = [m for stage_counts in counted for m in stage_counts]
            with lock:
                tally.result(shard.id, {"rows_written": written, "rows_rejected": dropped, "operators": flat})
                del live[shard.id]
                if not finished:
                    finished.extend(OperatorMetrics(m.name, m.kind) for m in flat)
                for total, m in zip(finished, flat, strict=True):
                    total.merge(m)
            sink.commit()
            return sink

        if progress is not None:
            progress.start(plan, [s.name for s in plan.recipe.stages])
        start = time.perf_counter()
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mdf-shard")
        try:
            running: dict[Future[Any], Shard] = {pool.submit(run_shard, s): s for s in plan.shards}
            recorded: set[str] = set()

            def record(shard: Shard) -> None:
                if checkpoint is not None and shard.id not in recorded:
                    recorded.add(shard.id)
                    with lock:
                        committed = tally.commit(shard.id)
                    checkpoint.shard_done(shard.id, committed)

            while running:
                done, _ = wait(running, timeout=0.2, return_when=FIRST_EXCEPTION)
                failure: BaseException | None = None
                for f in done:  # every finished future first: a commit done beside a failure still counts
                    shard = running.pop(f)
                    if f.exception() is not None:
                        failure = failure or f.exception()
                        continue
                    result = f.result()
                    if isinstance(result, _ShardSink):  # the shard's thread is done: now wait for its commit
                        assert result.committed is not None
                        running[result.committed] = shard
                    else:
                        record(shard)
                if failure is not None:
                    raise failure
                if progress is not None:
                    progress.update_counts(metrics)
        except BaseException as exc:
            budget.abort()
            if turns is not None:
                turns.abort()
            pool.shutdown(wait=True, cancel_futures=True)
            for sink in sinks:  # no writer may still be writing when the open part files are dropped
                sink.pool.shutdown(wait=True, cancel_futures=True)
            for sink in sinks:  # shards whose part files are committed need not be redone by --resume
                c = sink.committed
                if c is not None and c.done() and not c.cancelled() and c.exception() is None:
                    record(sink.shard)
            outputs.close()
            failed = next((s.error for s in sinks if s.error is not None), None)
            if isinstance(exc, Aborted) and failed is not None:  # a writer failed first: report its error
                raise failed from None
            raise
        finally:
            if progress is not None:
                progress.stop()
        pool.shutdown(wait=True)
        metrics.wall_s = time.perf_counter() - start
        stats.peak_bytes_in_flight = budget.peak
        metrics.stages = _stages(plan, finished)
        return metrics


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
