"""``mdf index info PATH`` and ``mdf index compact PATH``: the persistent dedup index of ``exact_dedup`` and
``minhash_dedup`` (``index:``), whose format this plugin owns (:mod:`mdf_dedup.index`).

The plugin adds the command to ``mdf`` through ``mdf_register_commands`` (by reference: loading the plugin for a
run imports nothing of it), so ``mdf index`` exists exactly where mdf-dedup is installed. The index modules are
imported when a sub-command runs, not for ``mdf --help``. ``info`` reads the manifest only, so it answers in the
same time for a thousand keys or a billion.
"""

from __future__ import annotations

import json

import click

from mdf import RecipeError


@click.group("index")
def command() -> None:
    """Inspect or compact a persistent dedup index (the index: of exact_dedup / minhash_dedup)."""


@command.command("info")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="print the figures as JSON")
def info(path: str, as_json: bool) -> None:
    """Generations, keys, bytes per key and the settings the keys were made with (from the manifest alone)."""
    from rich.console import Console
    from rich.table import Table

    from mdf_dedup.index import admin

    try:
        out = admin.info(path)
    except admin.NoIndex as exc:
        raise RecipeError(str(exc)) from None
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    console = Console(width=max(Console().width, 140))
    settings = ", ".join(f"{k}={v}" for k, v in out["settings"].items())
    console.print(f"index {out['path']}: {out['operator']} ({settings}), mdf {out['mdf_version']}", highlight=False)
    console.print(
        f"{out['keys']:,} keys in {len(out['generations'])} generation(s): {out['key_bytes_per_key']} bytes a key "
        f"(keys files), {out['source_bytes_per_key']} bytes a key (source ids, read only for rejected rows)",
        highlight=False,
    )
    table = Table(title_justify="left")
    for col in ("generation", "created", "run", "buckets", "keys", "bytes/key"):
        table.add_column(col, justify="right" if col in ("buckets", "keys", "bytes/key") else "left")
    for g in out["generations"]:
        per_key = f"{g['key_bytes'] / g['keys']:.2f}" if g["keys"] else "-"
        table.add_row(g["id"], g["created"], g["run"], str(g["buckets"]), f"{g['keys']:,}", per_key)
    console.print(table)
    if out["locked_by"]:
        console.print(f"being updated by the run writing {out['locked_by'].get('output')}", highlight=False)


@command.command("compact")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--buckets", type=click.IntRange(min=1), help="files per generation (default: the most any has)")
def compact(path: str, buckets: int | None) -> None:
    """Merge every generation into one (fewer files to open per run); takes the index's lock like an update run."""
    from mdf_dedup.index import admin
    from mdf_dedup.index.manifest import IndexBusy

    try:
        out = admin.compact(path, buckets)
    except (admin.NoIndex, IndexBusy) as exc:
        raise RecipeError(str(exc)) from None
    click.echo(f"{out['generations_before']} generation(s) -> {out['generations_after']}, {out['keys']:,} keys")
