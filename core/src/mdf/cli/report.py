"""``mdf report OUTPUT [--open]``: rebuild a run's HTML report from its metadata (``OUTPUT/_mdf/``)."""

from __future__ import annotations

import webbrowser

import click

from mdf.report.build import write_report


@click.command("report")
@click.argument("output", type=click.Path(file_okay=False))
@click.option("--open", "open_", is_flag=True, help="open the page in a browser, where one exists")
def command(output: str, open_: bool) -> None:
    """Write OUTPUT/_mdf/report.html for the run whose writer path is OUTPUT; print its path."""
    path = write_report(output)
    click.echo(str(path))
    if open_ and not webbrowser.open(path.resolve().as_uri()):
        click.echo("no browser found on this machine: open the file above from a machine with one", err=True)
