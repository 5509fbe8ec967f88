"""One exception hierarchy for everything mdf reports to a user.

Every message says what went wrong, the offending value, and how to fix it, so the CLI can print it as one
line without a traceback. ``RecipeError`` (and anything found before work starts) maps to exit code 2.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the bidirectional overrides that reorder what a terminal shows
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain(text: object) -> str:
    """``text`` with every control character shown as ``\\xNN`` / ``\\uNNNN`` instead of acting on a terminal."""
    return CONTROL.sub(lambda m: repr(m.group())[1:-1], str(text))


class MdfError(Exception):
    """Base of every error mdf raises on purpose. Its message is one line on the terminal, so text from the data
    in it (a file name, a header value) shows its control characters instead of sending them."""

    exit_code = 1

    def __str__(self) -> str:
        return plain(super().__str__())


class RecipeError(MdfError):
    """The recipe (or a ``--set`` override) is wrong; raised before any work is done.

    :param path: the YAML path of the offending key, e.g. ``stages[1].operators[0].min_length``.
    """

    exit_code = 2

    def __init__(self, message: str, path: str | None = None) -> None:
        self.path = path
        self.detail = message
        super().__init__(f"{path}: {message}" if path else message)


class PluginError(MdfError):
    """A plugin broke the plugin contract (bad class, duplicate name, failing hook)."""


class OperatorError(MdfError):
    """An operator failed on a batch in a way that is not a per-record problem."""


class InputError(MdfError):
    """An input file cannot be read at all (missing, corrupt footer, permission): names the file."""


class MissingDependencyError(ImportError, MdfError):
    """An operator's optional dependency is not installed; the message names the ``pip install`` that fixes it."""

    exit_code = 2


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread like ``^C`` (by ``mdf run``'s handler, or from the
    ``SystemExit`` Ray's driver handler raises), so a run unwinds: its folders are released and ``run.json`` ends
    ``failed``. ``signum``: the signal (``mdf run`` exits ``128 + signum``)."""

    signum: int = 15
