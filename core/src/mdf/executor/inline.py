"""The inline executor: one process, shard by shard, batch by batch through every stage.

It is the reference semantics: the Ray executor must produce the same part files. Reading the next batch and
writing the previous one overlap with the operators through a small thread pool (Arrow releases the GIL for
Parquet decode/encode and compression), which is where most of the time goes on filter-only pipelines.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pyarrow as pa

from mdf.damage import damaged_entries, note_damage
from mdf.executor.base import Outputs, Plan, build_stage, run_chain
from mdf.executor.failures import in_stage
from mdf.executor.passes import attach_state, run_passes
from mdf.metrics import RunMetrics, count_reasons
from mdf.operators import BatchContext, split_rejected
from mdf.state import Checkpoint, KeyState
from mdf.tally import totals


class InlineExecutor:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    def run(self, progress: Any = None) -> RunMetrics:
        return run_passes(self.plan, self._run_pass, KeyState.local, progress)

    def _run_pass(self, plan: Plan, state: KeyState | None, checkpoint: Checkpoint | None, progress: Any) -> RunMetrics:
        stages = [build_stage(plan.plugins, s, i) for i, s in enumerate(plan.recipe.stages)]
        for i, ops in enumerate(stages):
            attach_state(i, ops, state)
        outputs = Outputs.build(plan)
        keep_rejected = outputs.rejected is not None
        metrics = RunMetrics(executor="inline", shards=len(plan.shards))
        if progress is not None:
            progress.start(plan, [s.name for s in plan.recipe.stages])
        start = time.perf_counter()
        io_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mdf-write")
        pending: list[Future[None]] = []
        try:
            for shard in plan.shards:
                offset = 0
                for index, batch in enumerate(prefetch(plan.reader.read(shard, plan.batch_rows))):
                    metrics.rows_read += batch.num_rows
                    metrics.batches += 1
                    batch, rej = split_rejected(batch)
                    rejected = [rej] if rej is not None else []
                    if rej is not None:
                        count_reasons(rej, metrics.reader_reasons)
                        note_damage(metrics, damaged_entries(rej), plan.recipe.on_damaged_input == "fail")
                    ctx = BatchContext(shard.id, index, offset, shard.index)
                    kept, more = batch, []
                    for spec, ops in zip(plan.recipe.stages, stages, strict=True):  # stage by stage, as on Ray
                        with in_stage(spec.name):  # (filters fuse within a stage only)
                            kept, rej_stage = run_chain(ops, kept, ctx, keep_rejected)
                        more += rej_stage
                    offset += batch.num_rows
                    rejected += more
                    metrics.rows_written += kept.num_rows
                    metrics.rows_rejected += sum(r.num_rows for r in rejected)
                    metrics.observe(  # report: shard rows, per-operator counts over time
                        shard.id, kept.num_rows, sum(r.num_rows for r in rejected),
                        0 if rej is None else rej.num_rows, [[op.metrics for op in ops] for ops in stages],
                    )  # fmt: skip
                    while len(pending) >= 2:  # bound memory: at most two batches wait for the writer
                        pending.pop(0).result()
                    pending.append(io_pool.submit(self._write, outputs, shard.id, kept, rejected))
                    if progress is not None:
                        progress.update(stages, metrics)
                for f in pending:
                    f.result()
                pending.clear()
                io_pool.submit(outputs.commit, shard.id).result()
                if checkpoint is not None:  # one shard at a time: the counts so far are the committed ones
                    checkpoint.shard_done(shard.id, totals(metrics, [op.metrics for ops in stages for op in ops]))
        except BaseException:
            io_pool.shutdown(wait=True)  # a write still running on a file that close() closes crashes Arrow
            outputs.close()
            raise
        finally:
            io_pool.shutdown(wait=True)
        metrics.wall_s = time.perf_counter() - start
        metrics.stages = [
            {"name": spec.name, "operators": [op.metrics for op in ops]}
            for spec, ops in zip(plan.recipe.stages, stages, strict=True)
        ]
        if progress is not None:
            progress.stop()
        return metrics

    @staticmethod
    def _write(outputs: Outputs, shard_id: str, kept: pa.RecordBatch, rejected: list[pa.RecordBatch]) -> None:
        outputs.writer.write(kept, shard_id)
        if outputs.rejected is not None:
            for r in rejected:
                outputs.rejected.write(r, shard_id)


def prefetch(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Read one batch ahead in a thread so decoding overlaps with the operators."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mdf-read") as pool:
        future = pool.submit(next, batches, None)
        while True:
            batch = future.result()
            if batch is None:
                return
            future = pool.submit(next, batches, None)
            yield batch
