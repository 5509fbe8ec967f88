"""A third executor, as a plugin would write it: one shard after another, one batch at a time, in this thread.

It exists to prove that core names no executor: its figures (batches per shard, the slowest shard) reach ``mdf
run``'s table and the report through its :class:`SerialMetrics`, with no change to core. ``broken: true`` makes
its report renderer raise, to show that a plugin's broken figures cost their own section, never the run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import mdf
from mdf.executor.base import Outputs, build_stage, run_chain
from mdf.executor.batches import count_read, read_batch
from mdf.executor.passes import attach_state, run_passes
from mdf.metrics import StageMetrics
from mdf.tally import ShardTally


@dataclass
class SerialMetrics(mdf.ExecutorMetrics):
    shard_seconds: dict[str, float] = field(default_factory=dict)
    broken: bool = False

    def run_lines(self) -> list[str]:
        slowest = max(self.shard_seconds, key=self.shard_seconds.__getitem__, default="-")
        return [f"serial: {len(self.shard_seconds)} shard(s) one after another; slowest {slowest}"]

    def report_sections(self) -> list[mdf.ExecutorSection]:
        if self.broken:
            raise RuntimeError("the serial renderer is broken on purpose")
        rows = [[shard, seconds] for shard, seconds in self.shard_seconds.items()]
        return [mdf.ExecutorSection("serial", "Serial executor: time per shard", ["One shard at a time."],
                                    ["shard", "seconds"], rows, (1,))]  # fmt: skip


class SerialExecutor(mdf.Executor):
    """One shard at a time, one batch at a time, in the driver's thread."""

    name = "serial"
    Metrics = SerialMetrics

    class Params(mdf.ExecutorParams):
        broken: bool = False

    def run(self, progress=None) -> mdf.RunMetrics:
        return run_passes(self.plan, self._run_pass, mdf.KeyState.local, progress)

    def _run_pass(self, plan, state, checkpoint, progress) -> mdf.RunMetrics:
        outputs, start = Outputs.build(plan), time.perf_counter()
        stages = [build_stage(plan.plugins, s, i) for i, s in enumerate(plan.recipe.stages)]
        for i, ops in enumerate(stages):
            attach_state(i, ops, state)
        stats, tally = SerialMetrics(broken=self.params.broken), ShardTally()
        m = mdf.RunMetrics(executor=self.name, shards=len(plan.shards), executor_metrics=stats)
        for shard in plan.shards:
            began, offset = time.perf_counter(), 0
            for index, batch in enumerate(plan.reader.read(shard, plan.batch_rows)):
                read, batch, rejected = read_batch(shard, index, offset, batch)  # the loop every executor shares
                count_read(m, tally, read, plan.recipe.on_damaged_input == "fail")
                for ops in stages:
                    batch, more = run_chain(ops, batch, read.context(), outputs.rejected is not None)
                    rejected += more
                offset += read.rows
                m.rows_written += batch.num_rows
                m.rows_rejected += sum(r.num_rows for r in rejected)
                outputs.writer.write(batch, shard.id)
                for r in rejected if outputs.rejected is not None else []:
                    outputs.rejected.write(r, shard.id)
            outputs.commit(shard.id)
            stats.shard_seconds[shard.id] = round(time.perf_counter() - began, 4)
        m.wall_s = time.perf_counter() - start
        m.stages = [
            StageMetrics(s.name, [op.metrics for op in ops]) for s, ops in zip(plan.recipe.stages, stages, strict=True)
        ]
        return m


@mdf.hookimpl
def mdf_register_executors(registry):
    registry.add(SerialExecutor)
