"""Before any work (``mdf_recipe_loaded``): every deduplicator with an ``index`` checks it (exit 2)."""

from __future__ import annotations

from typing import Any


def check_indexes(recipe: Any) -> None:
    """An index made with other key settings, or being updated by another live run, fails the recipe."""
    from mdf_dedup.ops.exact import ExactDedup
    from mdf_dedup.ops.minhash import MinHashDedup

    kinds = {ExactDedup.name: ExactDedup, MinHashDedup.name: MinHashDedup}
    for i, stage in enumerate(recipe.stages):
        for j, spec in enumerate(stage.operators):
            cls = kinds.get(spec.name)
            if cls is not None and spec.params.get("index"):
                cls(**spec.params).check_index(f"stages[{i}].operators[{j}]")
