"""``mdf run RECIPE [--set key.path=value ...] [--overwrite | --resume] [--strict]``: check, run, print the table.

``--shards N,M,...`` and ``--finalize`` run a recipe as slices that share one output (:mod:`mdf.slices`)."""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING

import click

from mdf.errors import Terminated
from mdf.resolve import load_recipe
from mdf.run import run_recipe
from mdf.terminal import safe_metrics, shown
from mdf.terminate import handling_sigterm

if TYPE_CHECKING:
    from rich.console import Console

    from mdf.progress import LiveProgress
    from mdf.recipe import Recipe


@click.command("run")
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help="override a recipe key")
@click.option("--quiet", "-q", is_flag=True, help="no progress and no table")
@click.option(
    "--resume", is_flag=True, help="continue a killed run: skip shards it completed, restore its dedup key state"
)
@click.option(
    "--overwrite", is_flag=True, help="replace the output folders; the old ones stay until the new run succeeds"
)
@click.option("--strict", is_flag=True, help="exit 1 on the first damaged input file (on_damaged_input: fail)")
@click.option(
    "--shards",
    metavar="N,M,...",
    help="run only these shards (numbers in the input's listing), inline, into an output other slices share; "
    "each done shard gets a completion record",
)
@click.option("--finalize", is_flag=True, help="after slice runs: check every shard is done, then publish the output")
def command(
    recipe: str,
    overrides: tuple[str, ...],
    quiet: bool,
    resume: bool,
    overwrite: bool,
    strict: bool,
    shards: str | None,
    finalize: bool,
) -> None:
    """Run RECIPE (a YAML file).

    With ``--quiet`` nothing of rich's console, live display or tables is imported (~0.1 s of start-up on a
    loaded machine, ``tests/test_start_up.py``) unless a damaged input has to be named."""
    extra = [*(["executor.resume=true"] if resume else []), *(["on_damaged_input=fail"] if strict else [])]
    parsed = load_recipe(recipe, [*overrides, *extra])
    if shards is not None or finalize:
        _slices(parsed, shards, finalize, overwrite, quiet)
        return
    console: Console | None = None
    progress: LiveProgress | None = None
    if not quiet:
        from mdf.progress import LiveProgress

        console = _console()
        progress = LiveProgress(console)
    # The batch loop allocates few cyclic objects, but each gen-0 collection walks the young ones and every
    # full one the ~100 K objects of the imports: freeze those and collect ten times less often (W1: ~5 % of
    # CPU time, measured with py-spy and user+sys time)
    gc.freeze()
    gc.set_threshold(7000, 10, 10)
    announce = None if console is None else (lambda line: console.print(shown(line), soft_wrap=True, highlight=False))
    try:
        with handling_sigterm():
            metrics = run_recipe(parsed, progress=progress, overwrite=overwrite, announce=announce)
    except Terminated as exc:
        click.echo(f"error: {exc}; the output is kept: `mdf run --resume {recipe}` continues it", err=True)
        sys.exit(128 + exc.signum)
    if console is not None:  # text from the data (reasons, file names) is shown, never read as markup or escapes
        from rich.console import Console

        from mdf.cli.where import print_where
        from mdf.report import metrics_table

        Console(width=max(Console().width, 140)).print(metrics_table(safe_metrics(metrics)))
        print_where(console, parsed, metrics)
    for entry in metrics.damaged:  # even with --quiet: rows are missing from these files
        console = console or _console()
        console.print(f"[bold red]damaged input:[/] {shown(entry.describe())}", highlight=False, soft_wrap=True)
    if not metrics.balanced:
        raise click.ClickException(
            f"row accounting mismatch: {metrics.rows_read} read != {metrics.rows_written} kept + "
            f"{metrics.rows_rejected} rejected"
        )


def _slices(parsed: Recipe, shards: str | None, finalize: bool, overwrite: bool, quiet: bool) -> None:
    """``--shards`` or ``--finalize``: one line of what was done (none with ``--quiet``), exit 1 unbalanced."""
    from mdf import finalize as publish
    from mdf import slices

    if overwrite or (shards is not None and finalize):
        raise click.UsageError("--shards and --finalize exclude each other and --overwrite")
    try:
        numbers = [int(x) for x in shards.split(",") if x.strip()] if shards else []
    except ValueError:
        raise click.UsageError(f"--shards: '{shards}' is not comma-separated shard numbers") from None
    try:
        with handling_sigterm():
            metrics = publish.finalize(parsed) if finalize else slices.run_slice(parsed, numbers)
    except Terminated as exc:  # scancel: the shards recorded stay; a rerun of the slice does the rest
        click.echo(f"error: {exc}; the shards with a completion record are kept: run the others again", err=True)
        sys.exit(128 + exc.signum)
    what = "published" if finalize else f"{metrics.shards} shard(s) done"
    if not quiet:
        click.echo(f"{what}: {metrics.rows_read:,} read -> {metrics.rows_written:,} kept + "
                   f"{metrics.rows_rejected:,} rejected")  # fmt: skip
    if not metrics.balanced:
        raise click.ClickException(
            f"row accounting mismatch: {metrics.rows_read} read != {metrics.rows_written} kept + "
            f"{metrics.rows_rejected} rejected"
        )


def _console() -> Console:
    from rich.console import Console

    return Console(stderr=True)
