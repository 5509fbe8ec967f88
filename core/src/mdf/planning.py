"""A recipe planned: :func:`prepare` resolves it against the plugins, lists its input and runs every check that
can fail because of the recipe or the input listing, before any work (exit 2).

Apart from :mod:`mdf.run` (a run's whole life) so that what only plans, such as :func:`mdf.slice_plan` which
mdf's public face exports, imports none of the run's publishing and report modules.
"""

from __future__ import annotations

import dataclasses

from mdf.checks import preflight
from mdf.plan import Plan
from mdf.plugin_set import Plugins
from mdf.plugins import load_plugins
from mdf.recipe import Recipe
from mdf.resolve import build_component


def prepare(recipe: Recipe, plugins: Plugins | None = None) -> Plan:
    """The recipe resolved against ``plugins`` (loaded if not given), its input listed, checked before work."""
    plugins = plugins or load_plugins()
    reader = build_component(plugins.readers, recipe.reader, "reader")
    shards = [dataclasses.replace(s, index=i) for i, s in enumerate(reader.shards())]
    rows = recipe.executor.batch_rows
    plan = Plan(recipe, plugins, reader, shards, rows if isinstance(rows, int) else 0)
    preflight(plan)  # output folders, and the columns operators read against the input's schema
    if rows == "auto":  # sized from a random sample of the data itself (mdf.batching)
        from mdf.batching import resolve_auto

        plan.batch_rows, plan.max_in_flight = resolve_auto(plan, recipe)
    return plan
