"""The closing lines of ``mdf run`` and ``mdf demo``: where the kept rows, the rejected rows and the metrics are.

One place for both commands, so a newcomer finishing the demo learns the same layout ``mdf run`` prints.
"""

from __future__ import annotations

import os

from rich.console import Console

from mdf.recipe import Recipe


def where_lines(recipe: Recipe) -> list[str]:
    """``kept rows: out/``, ``rejected rows (with _reason): rejected/`` (when the recipe keeps them), ``metrics:``."""
    out = str(recipe.writer.params.get("path", "."))
    lines = [f"kept rows: {out.rstrip('/')}/"]
    if recipe.rejected is not None:
        lines.append(f"rejected rows (with _reason): {str(recipe.rejected.params.get('path', '.')).rstrip('/')}/")
    else:
        lines.append("rejected rows: not kept (add `rejected: {type: parquet, path: rejected/}` to the recipe)")
    lines.append(f"metrics: {os.path.join(out, 'metrics.json')}")
    return lines


def print_where(console: Console, recipe: Recipe) -> None:
    for line in where_lines(recipe):
        console.print(line, highlight=False)
