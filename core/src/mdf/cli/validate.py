"""``mdf validate RECIPE``: every check ``mdf run`` does before work, and nothing else."""

from __future__ import annotations

import click

from mdf.io.sharding import take_notes
from mdf.resolve import load_recipe
from mdf.run import prepare


@click.command("validate")
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help="override a recipe key")
def command(recipe: str, overrides: tuple[str, ...]) -> None:
    """Check RECIPE: names, parameters, input files. Exit 2 with the YAML path when something is wrong."""
    plan = prepare(load_recipe(recipe, list(overrides)))
    for note in take_notes():  # a skipped symlink loop, a file named twice: said here as the run says it
        click.echo(f"input: {note}")
    ops = sum(len(s.operators) for s in plan.recipe.stages)
    click.echo(
        f"ok: {recipe}: {len(plan.recipe.stages)} stage(s), {ops} operator(s), {len(plan.shards)} input shard(s)"
    )
