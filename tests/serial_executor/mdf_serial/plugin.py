"""A third executor, as a plugin would write it: one shard after another, in this thread, through the shard loop
every executor runs (:class:`mdf.ShardRunner`).

It exists to prove that core names no executor: its figures (the time per shard, the slowest shard) reach ``mdf
run``'s table and the report through its :class:`SerialMetrics`, with no change to core; and that an executor
plugin gets the shard loop, the counts, the checkpoints and ``--resume`` from ``mdf`` rather than writing them
again. ``broken: true`` makes its report renderer raise, to show that a plugin's broken figures cost their own
section, never the run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import mdf


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
    """One shard at a time, in the driver's thread (the runner still reads one batch ahead and writes in a
    thread of its own)."""

    name = "serial"
    Metrics = SerialMetrics

    class Params(mdf.ExecutorParams):
        broken: bool = False

    def run(self, progress=None) -> mdf.RunMetrics:
        return mdf.run_passes(self.plan, self._run_pass, mdf.KeyState.local, progress)

    def _run_pass(self, plan, state, checkpoint, progress) -> mdf.RunMetrics:
        stats, start = SerialMetrics(broken=self.params.broken), time.perf_counter()
        counter = mdf.PassCounter(mdf.RunMetrics(self.name, shards=len(plan.shards), executor_metrics=stats),
                                  plan.recipe.stages)  # fmt: skip
        runner = mdf.ShardRunner.for_plan(plan, state, counter.count)
        try:
            for shard in plan.shards:
                began = time.perf_counter()
                runner.run_all(shard)
                counter.committed(shard.id, checkpoint)
                stats.shard_seconds[shard.id] = round(time.perf_counter() - began, 4)
        except BaseException:
            runner.stop()  # the part files not committed are dropped
            raise
        return counter.finish(time.perf_counter() - start)


@mdf.hookimpl
def mdf_register_executors(registry):
    registry.add(SerialExecutor)
