"""An executor's own settings are validated once, by its own ``Params`` model, when the recipe is loaded; the run
reuses them. They were validated three times (loading the recipe, choosing the executor, constructing it), so a
validator with a cost or a side effect (probing a cluster address) ran three times. Fails on that code: seen
(3 validations)."""

from __future__ import annotations

import json

from pydantic import model_validator

from mdf.executor.inline import InlineExecutor, InlineParams
from mdf.plugins import load_plugins
from mdf.resolve import parse_recipe
from mdf.run import run_recipe
from mdf.testing import register_plugin

CHECKS: list[str] = []


class CountedParams(InlineParams):
    @model_validator(mode="after")
    def _count(self) -> CountedParams:
        CHECKS.append("checked")
        return self


class CountedExecutor(InlineExecutor):
    name = "counted_inline"
    Params = CountedParams


class Plugin:
    from mdf import hookimpl

    @hookimpl
    def mdf_register_executors(self, registry):
        registry.add(CountedExecutor)


def test_executor_settings_are_validated_once(tmp_path, monkeypatch):
    plugins = load_plugins()
    if "counted_inline" not in plugins.executors.names():
        register_plugin(plugins, Plugin(), "counted-executor")
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"id": i, "text": "x" * i}) + "\n" for i in range(20)))
    recipe = {
        "reader": {"type": "jsonl", "paths": [str(tmp_path / "in.jsonl")]},
        "stages": [{"name": "s", "operators": ["noop_refiner"]}],
        "writer": {"type": "parquet", "path": str(tmp_path / "out")},
        "executor": {"type": "counted_inline", "workers": 1},
    }
    CHECKS.clear()
    metrics = run_recipe(parse_recipe(recipe, plugins=plugins), plugins=plugins)
    assert metrics.rows_written == 20
    assert len(CHECKS) == 1
