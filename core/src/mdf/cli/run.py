"""``mdf run RECIPE [--set key.path=value ...] [--resume]``: validate everything, then run, then print the table."""

from __future__ import annotations

import click
from rich.console import Console

from mdf.cli.where import print_where
from mdf.executor import run_recipe
from mdf.progress import LiveProgress
from mdf.recipe import load_recipe
from mdf.report import metrics_table


@click.command("run")
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help="override a recipe key")
@click.option("--quiet", "-q", is_flag=True, help="no progress and no table")
@click.option(
    "--resume", is_flag=True, help="continue a killed run: skip shards it completed, restore its dedup key state"
)
def command(recipe: str, overrides: tuple[str, ...], quiet: bool, resume: bool) -> None:
    """Run RECIPE (a YAML file)."""
    console = Console(stderr=True)
    parsed = load_recipe(recipe, [*overrides, *(["executor.resume=true"] if resume else [])])
    progress = None if quiet else LiveProgress(console)
    metrics = run_recipe(parsed, progress=progress)
    if not quiet:
        Console(width=max(Console().width, 140)).print(metrics_table(metrics))
        print_where(console, parsed)
    if not metrics.balanced:
        raise click.ClickException(
            f"row accounting mismatch: {metrics.rows_read} read != {metrics.rows_written} kept + "
            f"{metrics.rows_rejected} rejected"
        )
