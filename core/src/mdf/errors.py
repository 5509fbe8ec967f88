"""One exception hierarchy for everything mdf reports to a user.

Every message says what went wrong, the offending value, and how to fix it, so the CLI can print it as one
line without a traceback. ``RecipeError`` (and anything found before work starts) maps to exit code 2.
"""

from __future__ import annotations


class MdfError(Exception):
    """Base of every error mdf raises on purpose."""

    exit_code = 1


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
