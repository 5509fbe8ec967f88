"""``mdf plan RECIPE --cluster CPUS[,GPUS]``: the scale-out projection for one cluster shape, on the command line.

The costs come from the recipe's last run when its output holds ``metrics.json`` (every process's CPU time
counted), else from timing the stages on a sample (``--measure``), which misses reading and writing and says so.
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from mdf import projection as proj
from mdf.errors import RecipeError
from mdf.layout import metrics_path
from mdf.metrics import RunMetrics
from mdf.recipe import Recipe


def parse_cluster(value: str) -> tuple[int, int]:
    """``"64"`` or ``"64,8"`` -> (CPUs, GPUs)."""
    try:
        parts = [int(p) for p in value.split(",")]
        if len(parts) not in (1, 2) or parts[0] < 1 or min(parts) < 0:
            raise ValueError
    except ValueError:
        raise RecipeError(f"--cluster {value!r}: expected CPUS or CPUS,GPUS, e.g. --cluster 64 or 64,8") from None
    return parts[0], parts[1] if len(parts) == 2 else 0


def measured_for(recipe: Recipe, sample_costs: Any, batch_rows: int) -> proj.Measured:
    """The last run's measured costs when its metrics match this recipe's stages, else the sample's."""
    path = metrics_path(str(recipe.writer.params.get("path", ".")))
    if path.is_file():
        m = RunMetrics.read_json(path)
        if [s.name for s in m.stages] == [s.name for s in recipe.stages]:
            measured = proj.Measured.from_metrics(m)
            measured.notes.append(f"costs from the run recorded in {path}")
            return measured
    return proj.Measured.from_stage_costs(sample_costs, batch_rows)


def show(measured: proj.Measured, cpus: int, gpus: int, as_json: bool) -> None:
    results = {n: proj.project(measured, cpus, gpus, n) for n in proj.RECORDS}
    first = results[proj.RECORDS[0]]
    if as_json:
        out = {
            "cpus": cpus,
            "gpus": gpus,
            "rows_per_s": round(first.rows_per_s, 1),
            "bound": first.bound,
            "bounds": {k: round(v, 1) for k, v in first.bounds.items()},
            "seconds": {str(n): round(p.seconds(n), 1) for n, p in results.items()},
            "assumptions": proj.assumptions(measured),
        }
        click.echo(json.dumps(out, indent=2))
        return
    table = Table(title=f"projection on {cpus:,} CPUs, {gpus:,} GPUs", title_justify="left")
    for col in ("bound", "rows/s", "1 B records", "100 B records"):
        table.add_column(col, justify="left" if col == "bound" else "right")
    for name, rate in sorted(first.bounds.items(), key=lambda kv: kv[1]):
        mark = " (sets the rate)" if name == first.bound else ""
        table.add_row(
            name + mark, f"{rate:,.0f}", proj.human_seconds(1e9 / rate), proj.human_seconds(1e11 / rate)
        )  # fmt: skip
    console = Console(width=max(Console().width, 140))
    console.print(table)
    for line in proj.assumptions(measured):
        console.print(f"  - {line}", highlight=False)
