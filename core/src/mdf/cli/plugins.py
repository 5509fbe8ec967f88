"""``mdf plugins``: each plugin with its distribution, version, contributions, or its load error."""

from __future__ import annotations

import json
from dataclasses import asdict

import click
from rich.console import Console
from rich.table import Table

from mdf.plugins import load_plugins


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def command(as_json: bool) -> None:
    """List installed plugins and what each contributed."""
    plugins = load_plugins()
    plugins.resolve_all()  # import what plugins registered by reference, so a broken module shows as an error
    infos = plugins.infos
    if as_json:
        click.echo(json.dumps([asdict(i) for i in infos], indent=2))
        return
    table = Table(title=f"{len(infos)} plugin(s)", title_justify="left")
    for col in ("plugin", "distribution", "version", "contributed / status"):
        table.add_column(col)
    for i in infos:
        if i.disabled:
            status = "[yellow]disabled by MDF_DISABLE_PLUGINS[/]"
        elif i.error:
            status = f"[red]failed to load: {i.error.splitlines()[0]}[/]"
        else:
            status = "; ".join(f"{k}: {', '.join(v)}" for k, v in i.contributed.items() if v) or "-"
        table.add_row(i.name, i.distribution, i.version, status)
    Console(width=160).print(table)
