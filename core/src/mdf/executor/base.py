"""What every executor shares: planning (all checks before work), the per-batch operator chain, outputs.

:func:`prepare` does everything that can fail because of the recipe or the input listing (resolving names,
validating parameters, listing shards, reading Parquet footers) so a bad run fails with exit code 2 before a
single batch is read. :func:`run_chain` is the one definition of what happens to a batch, used by the inline
loop and by Ray stage actors alike, which is what makes both executors give the same rows.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from mdf.checks import preflight
from mdf.fusion import plan_steps
from mdf.io.base import Reader, Shard, Writer
from mdf.metrics import RunMetrics
from mdf.operators import BatchContext, Operator
from mdf.ownership import claim
from mdf.plugins import Plugins, load_plugins
from mdf.recipe import Recipe, StageSpec, build_component, build_operator
from mdf.report.build import write_report
from mdf.report.context import run_context


@dataclass
class Plan:
    """A recipe resolved against the installed plugins, with its input listed."""

    recipe: Recipe
    plugins: Plugins
    reader: Reader
    shards: list[Shard]
    batch_rows: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def output_dir(self) -> str:
        return str(self.recipe.writer.params.get("path", "."))


def prepare(recipe: Recipe, plugins: Plugins | None = None) -> Plan:
    plugins = plugins or load_plugins()
    reader = build_component(plugins.readers, recipe.reader, "reader")
    shards = [dataclasses.replace(s, index=i) for i, s in enumerate(reader.shards())]
    rows = recipe.executor.batch_rows
    plan = Plan(recipe, plugins, reader, shards, rows if isinstance(rows, int) else 0)
    preflight(plan)  # output folders, and the columns operators read against the input's schema
    if rows == "auto":  # sized from a random sample of the data itself (mdf.partition)
        from mdf.partition import resolve_auto

        plan.batch_rows, plan.extra["max_in_flight"] = resolve_auto(plan, recipe)
    return plan


def build_stage(plugins: Plugins, stage: StageSpec, index: int) -> list[Operator]:
    """Construct a stage's operators (in the worker that will run them)."""
    return [build_operator(plugins, op, f"stages[{index}].operators[{j}]") for j, op in enumerate(stage.operators)]


def run_chain(
    operators: list[Operator], batch: pa.RecordBatch, ctx: BatchContext, keep_rejected: bool = True
) -> tuple[pa.RecordBatch, list[pa.RecordBatch]]:
    """Pass a batch through operators in order; return the kept rows and every rejected piece.

    Runs of fusable filters are applied with one copy of the batch (:mod:`mdf.fusion`). With
    ``keep_rejected=False`` rejected pieces carry only their ``_reason`` column (nothing will write them).
    """
    rejected: list[pa.RecordBatch] = []
    for step in plan_steps(operators):
        if batch.num_rows == 0:
            break
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


def run_recipe(
    recipe: Recipe, progress: Any = None, plugins: Plugins | None = None, overwrite: bool = False
) -> RunMetrics:
    """Plan, claim the output folders (:mod:`mdf.ownership`: lock, fingerprint, ``--overwrite``/``--resume``),
    run with the executor the recipe names, then publish (``_mdf/metrics.json``, swap of a staged output)."""
    from mdf.executor.inline import InlineExecutor

    owned = claim(prepare(recipe, plugins), overwrite)
    try:
        plan = owned.plan
        if recipe.executor.type == "ray":
            from mdf.executor.ray import RayExecutor

            executor: Any = RayExecutor(plan)
        else:
            executor = InlineExecutor(plan)
        metrics = executor.run(progress)
        metrics.extra.update(run_context(recipe, plan.extra, plan.batch_rows))  # recipe, machine: for the report
        owned.finish(metrics)
    finally:
        owned.release()
    try:  # the data and metrics.json are published: a report that cannot be drawn must not fail the run
        metrics.report = write_report(owned.output)
    except Exception as exc:  # said on the run's last line; `mdf report` retries it
        metrics.extra["report_error"] = f"{type(exc).__name__}: {exc}"
    return metrics
