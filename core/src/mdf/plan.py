"""The plan of a run: a recipe resolved against the installed plugins, with its input listed.

It sits below everything that uses it (the batch-size planner, the chain, every executor), so none of them has
to import another to name it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mdf.io.base import Reader, Shard
from mdf.plugin_set import Plugins
from mdf.recipe import Recipe


@dataclass
class Plan:
    """A recipe resolved against the installed plugins, with its input listed."""

    recipe: Recipe
    plugins: Plugins
    reader: Reader
    shards: list[Shard]
    batch_rows: int
    max_in_flight: int | None = None  # the batch-size planner's bound, with ``batch_rows: auto``
    batch_plan: dict[str, Any] | None = None  # the batch-size planner's choice and rules, for the report
    fingerprint: str | None = None  # of recipe and input, once the output folders are claimed (--resume checks it)

    @property
    def output_dir(self) -> str:
        return str(self.recipe.writer.params.get("path", "."))
