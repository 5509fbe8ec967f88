"""What every executor shares: building a stage's operators, the per-batch operator chain, outputs (planning,
all checks before work, is :func:`mdf.run.prepare`).

:func:`run_chain` is the one definition of what happens to a batch, used by the inline
loop and by Ray stage actors alike, which is what makes both executors give the same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from mdf.deduplicator import Deduplicator
from mdf.fusion import fuse_steps
from mdf.io.base import Writer
from mdf.operators import BatchContext, Operator
from mdf.plan import Plan
from mdf.plugin_set import Plugins
from mdf.recipe import StageSpec
from mdf.resolve import build_component, build_operator


def build_stage(plugins: Plugins, stage: StageSpec, index: int) -> list[Operator]:
    """Construct a stage's operators (in the worker that will run them)."""
    return [build_operator(plugins, op, f"stages[{index}].operators[{j}]") for j, op in enumerate(stage.operators)]


Gate = Callable[[Any, BatchContext], AbstractContextManager[Any]]


def run_chain(
    operators: list[Operator],
    batch: pa.RecordBatch,
    ctx: BatchContext,
    keep_rejected: bool = True,
    gate: Gate | None = None,
) -> tuple[pa.RecordBatch, list[pa.RecordBatch]]:
    """Pass a batch through operators in order; return the kept rows and every rejected piece.

    Runs of fusable filters are applied with one copy of the batch (:mod:`mdf.fusion`). With
    ``keep_rejected=False`` rejected pieces carry only their ``_reason`` column (nothing will write them).
    ``gate(step, ctx)`` wraps each step (the inline executor orders streaming deduplicators with it).
    """
    rejected: list[pa.RecordBatch] = []
    for step in fuse_steps(operators):
        if batch.num_rows == 0:
            break
        if gate is None:
            batch, rej = step.process(batch, ctx, keep_rejected)
        else:
            if isinstance(step, Deduplicator):
                step.prepare(batch, ctx)  # its keys, hashed before its turn: only the claims are ordered
            with gate(step, ctx):
                batch, rej = step.process(batch, ctx, keep_rejected)
        if rej is not None and rej.num_rows:
            rejected.append(rej)
    return batch, rejected


@dataclass
class Outputs:
    """The kept-rows writer and the optional rejected-rows writer of a run."""

    writer: Writer
    rejected: Writer | None

    @classmethod
    def build(cls, plan: Plan) -> Outputs:
        r = plan.recipe
        rej = build_component(plan.plugins.writers, r.rejected, "rejected") if r.rejected else None
        return cls(build_component(plan.plugins.writers, r.writer, "writer"), rej)

    def commit(self, shard_id: str) -> list[str]:
        paths = self.writer.commit(shard_id)
        if self.rejected is not None:
            paths += self.rejected.commit(shard_id)
        return paths

    def close(self) -> None:
        self.writer.close()
        if self.rejected is not None:
            self.rejected.close()
