"""A Ray pass's book: what both drivers (batch chains, whole shards) keep while they run a pass, and how they end.

The counts go through the :class:`~mdf.executor.batches.PassCounter` every executor uses; the book adds what is
Ray's own: the pipeline of actors, the peaks of chains and bytes in flight, a shard's committed parts (their open
S3 uploads noted before the checkpoint), the writers' abort when the driver fails, and the pass's
:class:`~mdf.executor.ray.metrics.RayMetrics` at its end.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from mdf.executor.batches import PassCounter
from mdf.executor.ray.metrics import collect
from mdf.executor.ray.parts import record
from mdf.executor.ray.placement import Pipeline
from mdf.metrics import RunMetrics
from mdf.state import Checkpoint


@dataclass
class Book:
    """One pass: its pipeline, counts, checkpoint and progress display."""

    pipe: Pipeline
    checkpoint: Checkpoint | None
    progress: Any
    counter: PassCounter = field(init=False)
    peak_in_flight: int = 0
    peak_bytes_in_flight: int = 0
    started: float = field(default_factory=time.perf_counter)

    def __post_init__(self) -> None:
        plan = self.pipe.plan
        self.counter = PassCounter(RunMetrics(executor="ray", shards=len(plan.shards)), plan.recipe.stages)
        if self.progress is not None:
            self.progress.start(plan, [s.name for s in plan.recipe.stages], self.pipe.replicas_by_stage())

    def in_flight(self, chains: int, nbytes: int = 0) -> None:
        self.peak_in_flight = max(self.peak_in_flight, chains)
        self.peak_bytes_in_flight = max(self.peak_bytes_in_flight, nbytes)

    def committed(self, files: list[Any], shard: str) -> None:
        """A shard's parts are committed (``files``: what its writer's commit returned; getting it surfaced a
        failed commit): note their open uploads, then the counts and the checkpoint."""
        record(files)
        self.counter.committed(shard, self.checkpoint)

    def show(self) -> None:
        if self.progress is not None:
            self.progress.update_counts(self.counter.metrics)

    @contextmanager
    def driving(self) -> Iterator[None]:
        """A driver loop's end, either mode: on a failure the writers drop their uncommitted parts."""
        try:
            yield
        except BaseException:
            for w in self.pipe.writers:  # whole shards: the replicas
                w.abort_all.remote()
            raise
        finally:
            if self.progress is not None:
                self.progress.stop()

    def finish(self) -> RunMetrics:
        metrics = self.counter.finish(time.perf_counter() - self.started)
        metrics.executor_metrics = collect(self.pipe, self.peak_in_flight, self.peak_bytes_in_flight, metrics.wall_s)
        return metrics
