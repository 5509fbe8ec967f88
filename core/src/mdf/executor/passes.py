"""What a run is, above one pass over the input: key state, cluster-dedup passes, checkpoints, resume.

Both executors run :func:`run_passes` with their own ``run_pass`` and their own key state (buckets in process,
or bucket actors on Ray). A recipe without cluster-mode dedups is one pass. Each cluster-mode dedup adds a
pass before the last: the recipe cut after that operator, writing nothing, its operator collecting keys; then
the state closes the clusters (:meth:`mdf.state.KeyState.finalize`) and later passes keep the cluster roots.
Passes run in recipe order, so a second cluster dedup sees the rows the first one kept.

Only the last pass writes output, takes checkpoints and honours ``--resume``: the collect passes are
deterministic and are simply run again on a resume, on a fresh state, before the last snapshot is restored.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from mdf.cpus import usable_cores
from mdf.deduplicator import Deduplicator
from mdf.metrics import RunMetrics
from mdf.operators import Operator
from mdf.plan import Plan
from mdf.recipe import ComponentSpec, Recipe
from mdf.run_stats import KeyStateStats, PassMetrics, ResumeInfo
from mdf.state import Checkpoint, KeyState, auto_buckets

RunPass = Callable[[Plan, "KeyState | None", "Checkpoint | None", Any], RunMetrics]


def namespace(stage: int, op: int, name: str) -> str:
    """Key-state namespace of the operator at ``stages[stage].operators[op]``: unique within a recipe."""
    return f"s{stage}.o{op}:{name}"


def attach_state(stage_index: int, operators: list[Operator], state: KeyState | None) -> None:
    for j, op in enumerate(operators):
        if isinstance(op, Deduplicator):
            op.attach_state(state, namespace(stage_index, j, op.name))


def dedup_positions(plan: Plan) -> list[tuple[int, int, str]]:
    """``(stage, operator, mode)`` of every deduplicator in the recipe."""
    out = []
    for i, stage in enumerate(plan.recipe.stages):
        for j, spec in enumerate(stage.operators):
            cls = plan.plugins.operators.get(spec.name)
            if issubclass(cls, Deduplicator):
                out.append((i, j, str(spec.params.get("mode", "streaming"))))
    return out


def collect_recipe(recipe: Recipe, stage: int, op: int) -> Recipe:
    """The recipe cut right after ``stages[stage].operators[op]``, writing nothing."""
    stages = [s.model_copy() for s in recipe.stages[: stage + 1]]
    stages[-1] = stages[-1].model_copy(update={"operators": stages[-1].operators[: op + 1]})
    return recipe.model_copy(update={"stages": stages, "writer": ComponentSpec(type="discard"), "rejected": None})


def run_passes(plan: Plan, run_pass: RunPass, make_state: Callable[[int], KeyState], progress: Any) -> RunMetrics:
    dedups = dedup_positions(plan)
    spec = plan.recipe.state
    if isinstance(spec.num_buckets, int):
        num_buckets = spec.num_buckets
    else:  # without a figure from the recipe, one key per input row (Parquet footers tell the rows)
        expected = spec.expected_keys or sum(s.rows or 0 for s in plan.shards)
        num_buckets = auto_buckets(expected, usable_cores())
    state = make_state(num_buckets) if dedups else None
    passes: list[PassMetrics] = []
    for i, j, mode in dedups:
        if mode != "cluster":
            continue
        assert state is not None
        ns = namespace(i, j, plan.recipe.stages[i].operators[j].name)
        start = time.perf_counter()
        sub = dataclasses.replace(plan, recipe=collect_recipe(plan.recipe, i, j))
        m = run_pass(sub, state, None, None)
        clusters = state.finalize(ns)
        wall_s = round(time.perf_counter() - start, 3)
        passes.append(PassMetrics(ns, m.rows_read, wall_s, clusters["edges"], clusters["rows_in_clusters"],
                                  clusters["clusters"]))  # fmt: skip
    resume = plan.recipe.executor.resume
    checkpoint = Checkpoint(plan.output_dir, state, spec.snapshot_every_s, resume, plan.fingerprint)
    done = checkpoint.load()
    final = dataclasses.replace(plan, shards=[s for s in plan.shards if s.id not in done]) if done else plan
    metrics = run_pass(final, state, checkpoint, progress)
    checkpoint.save()
    metrics.passes = passes
    if done:  # the whole run: the restored shards' counts plus this run's
        checkpoint.restored.add_to(metrics, first=True)
        metrics.shards = len(plan.shards)
        metrics.resumed = ResumeInfo(
            skipped_shards=len(done),
            restored_rows_read=checkpoint.restored.rows_read,
            this_run_shards=len(final.shards),
            shards=sorted(done),
        )
    if state is not None:
        metrics.key_state = {ns: KeyStateStats.from_dict(s) for ns, s in state.stats().items()}
        metrics.key_state_snapshots = checkpoint.snapshots
    return metrics
