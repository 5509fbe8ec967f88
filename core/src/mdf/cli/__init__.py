"""The ``mdf`` command: one module per sub-command; errors become one line and an exit code.

Sub-command modules are imported when their command runs (``mdf --version`` imports none of them, and
``mdf ops`` not the executors or Ray). Plugins add commands through ``mdf_register_commands``
(:mod:`mdf.commands`); the plugins are loaded only to list them (``mdf --help``) or to run a name that is not
one of mdf's own.

A :class:`~mdf.errors.MdfError` prints as ``error: <message>`` without a traceback: exit 2 for recipe and
input-listing problems (nothing was done), 1 for failures during the run. Any other exception is a bug in
mdf or a plugin: it too is one line (exit 1) naming the run's log file, which holds the traceback
(:mod:`mdf.runlog`). ``MDF_DEBUG=1`` shows tracebacks on the terminal.

``OPENBLAS_NUM_THREADS`` defaults to 1 for the command (a value the user set is kept). numpy, which pyarrow
imports, starts OpenBLAS with a helper thread for each core past the first, and a helper spins before it sleeps:
~0.1 s of CPU a run on this project's 2-core machine (``import numpy``: 0.15 s user, 0.05 s with the variable at
1). mdf's parallelism is its workers and kernel threads, which already take every core, so a BLAS call inside an
operator gets one thread, as Ray sets ``OMP_NUM_THREADS`` (1 by default) for its workers. It must be set before
numpy's first import, so here and not in an operator.

``MIMALLOC_ARENA_EAGER_COMMIT`` defaults to 0 the same way, before pyarrow loads its allocator. pyarrow's
mimalloc (3.4 in pyarrow 26) otherwise commits its 1 GiB arenas at once and asks for transparent huge pages on
them (``madvise(MADV_HUGEPAGE)``, seen with ``strace``). Where the kernel's THP ``defrag`` setting is ``madvise``
(Debian's and Ubuntu's default), each first touch of a 2 MiB page may then stall in direct compaction and zeroes
2 MiB: ``perf`` of W1 200 K showed 25-36 % of the run's samples in the kernel's ``clear_page_erms``, and six
interleaved runs spread 1.78-2.97 s (CPU 4.55 s, medians). With the variable at 0 the arenas commit on demand in
4 KiB pages: 2.01-2.08 s (CPU 3.50 s) (``benchmarks/README.md``, "Allocator").
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported (see the module docstring)
os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")  # before pyarrow loads mimalloc (the same)

import importlib
import sys

import click

from mdf import __version__
from mdf.commands import CORE_COMMANDS
from mdf.errors import MdfError, plain
from mdf.storage.redact import redact_text


class LazyGroup(click.Group):
    """Imports ``mdf.cli.<name>`` only when the command ``name`` is asked for; a plugin's command only when it
    is asked for or listed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from mdf.plugins import load_plugins

        return [*CORE_COMMANDS, *load_plugins().commands.names()]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from mdf.pandas_probe import defer_pandas

        defer_pandas()  # before any module of the command converts a Python value with pyarrow
        if cmd_name in CORE_COMMANDS:
            return importlib.import_module(f"mdf.cli.{cmd_name}").command  # type: ignore[no-any-return]
        from mdf.plugins import load_plugins

        commands = load_plugins().commands
        if cmd_name in commands:
            return commands.command(cmd_name)
        if commands.failed:  # a plugin that failed to load may be the one that adds it: say so
            raise click.UsageError(f"{commands.unknown_message(cmd_name)}", ctx)
        return None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mdf")
def cli() -> None:
    """mdf (Mega Data Factory): clean web-scale data for training, on every core of this machine or on Ray."""


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, standalone_mode=False)
    except MdfError as exc:
        if os.environ.get("MDF_DEBUG"):
            raise
        click.echo(f"error: {redact_text(str(exc))}", err=True)
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
    except Exception as exc:
        if os.environ.get("MDF_DEBUG"):
            raise
        from mdf import runlog

        where = f"traceback in {runlog.last_path}" if runlog.last_path else "MDF_DEBUG=1 shows the traceback"
        text = redact_text(plain(exc))
        click.echo(f"error: unexpected {type(exc).__name__}: {text} ({where}; please report it)", err=True)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
