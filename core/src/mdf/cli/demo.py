"""``mdf demo``: generate a small CommonCrawl-like set, run the example text recipe on it, print the table."""

from __future__ import annotations

import os

import click
from rich.console import Console

from mdf.cli.where import print_where
from mdf.demo_data import DemoSpec, write_dataset
from mdf.errors import RecipeError
from mdf.progress import LiveProgress
from mdf.report import metrics_table
from mdf.resolve import load_recipe
from mdf.run import run_recipe
from mdf.terminal import safe_metrics


@click.command("demo")
@click.option("--recipe", default="examples/text.yaml", show_default=True, help="recipe to run on the demo data")
@click.option("--dir", "workdir", default="mdf-demo", show_default=True, help="where data and output go")
@click.option("--rows", default=20_000, show_default=True, help="records to generate")
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help="override a recipe key")
def command(recipe: str, workdir: str, rows: int, overrides: tuple[str, ...]) -> None:
    """Generate demo data and run RECIPE on it."""
    if not os.path.exists(recipe):
        raise RecipeError(f"demo recipe {recipe!r} not found; run from the mdf repository root or pass --recipe")
    console = Console(stderr=True)
    data = os.path.join(workdir, "data")
    paths = write_dataset(data, DemoSpec(rows=rows))
    console.print(f"generated {rows:,} records in {len(paths)} Parquet files under {data}/")
    sets = [
        f"reader.paths=[{os.path.join(data, '*.parquet')}]",
        f"writer.path={os.path.join(workdir, 'out')}",
        f"rejected.path={os.path.join(workdir, 'rejected')}",
        *overrides,
    ]
    parsed = load_recipe(recipe, sets)
    # the demo regenerates its data, so it replaces its own earlier output
    metrics = run_recipe(parsed, progress=LiveProgress(console), overwrite=True)
    Console(width=max(Console().width, 140)).print(metrics_table(safe_metrics(metrics)))
    print_where(console, parsed, metrics)
