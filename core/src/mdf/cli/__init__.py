"""The ``mdf`` command: one module per sub-command; errors become one line and an exit code.

A :class:`~mdf.errors.MdfError` prints as ``error: <message>`` without a traceback: exit 2 for recipe and
input-listing problems (nothing was done), 1 for failures during the run. ``MDF_DEBUG=1`` shows tracebacks.
"""

from __future__ import annotations

import os
import sys

import click

from mdf import __version__
from mdf.cli import demo, ops, plan, plugins, report, run, validate
from mdf.errors import MdfError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mdf")
def cli() -> None:
    """mdf (Mega Data Factory): clean web-scale data for training, inline or on Ray."""


for module in (run, validate, plan, ops, plugins, demo, report):
    cli.add_command(module.command)


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, standalone_mode=False)
    except MdfError as exc:
        if os.environ.get("MDF_DEBUG"):
            raise
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, EOFError):  # click turns any EOFError into Abort: that is a failure, not ^C
            click.echo(f"error: unexpected end of input: {exc.__cause__}", err=True)
            sys.exit(1)
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)


if __name__ == "__main__":  # pragma: no cover
    main()
