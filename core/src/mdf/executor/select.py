"""Which executor runs a recipe, and ``run_recipe``: the factory above every executor implementation.

The executor classes come from the plugin registry (core registers ``inline`` and ``ray``), so this module
imports none of them. :meth:`mdf.recipe.ExecutorSpec.choice` says which one a recipe gets and why; ``mdf run``
prints that as one line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from mdf.executor.api import Executor
from mdf.executor.base import prepare
from mdf.executor.plan import Plan
from mdf.metrics import RunMetrics
from mdf.plugins import Plugins
from mdf.recipe import Recipe, check_executor


def build_executor(plan: Plan) -> tuple[Executor, str]:
    """The recipe's executor, constructed with its validated parameters, and one line saying which and why."""
    spec = plan.recipe.executor
    name, why = spec.choice()
    params = check_executor(spec, plan.plugins)  # exit 2 (with the pip line) when the executor cannot run here
    cls = plan.plugins.executors.get(name, "executor.type")
    executor = cls(plan, **params.model_dump(exclude_unset=True))
    detail = executor.summary()
    return executor, f"executor: {name}{' (' + detail + ')' if detail else ''}, because {why}"


def run_recipe(
    recipe: Recipe,
    progress: Any = None,
    plugins: Plugins | None = None,
    announce: Callable[[str], None] | None = None,
) -> RunMetrics:
    """Plan and run a recipe with the executor it gets; write ``metrics.json`` beside the output."""
    plan = prepare(recipe, plugins)
    executor, line = build_executor(plan)
    if announce is not None:
        announce(line)
    metrics = executor.run(progress)
    metrics.write_json(os.path.join(plan.output_dir, "metrics.json"))
    return metrics
