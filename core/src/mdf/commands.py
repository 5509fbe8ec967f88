"""Sub-commands of ``mdf`` that plugins contribute (the ``mdf_register_commands`` hook).

A plugin adds a click command (or group) the way it adds an operator: ``registry.add(command)``, or by reference,
``registry.add_lazy("index", "mdf_dedup.cli:command")``, so that loading the plugin for a run imports none of its
command code. The ``mdf`` command lists the commands of the installed plugins after its own (``mdf --help``);
core names no plugin. A command that fails to import is shown with its error and fails alone (exit 1, one
line); ``mdf`` and the other commands go on working, and ``mdf plugins`` shows the error as its plugin's.

A plugin may not take a name of mdf's own commands (``run``, ``validate``, ...): the registry refuses it as a
:class:`~mdf.errors.PluginError` of that plugin, as it refuses a name another plugin took.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mdf.errors import PluginError
from mdf.registry import Owner, Registry

if TYPE_CHECKING:
    import click

CORE_COMMANDS = ("run", "validate", "plan", "ops", "plugins", "demo", "report")
"""mdf's own sub-commands, each a module ``mdf.cli.<name>`` exporting ``command``."""

_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*\Z")


@dataclass
class CommandRegistry(Registry):  # type: ignore[type-arg]
    """Name -> click command, for the commands plugins add to ``mdf``.

    Entries are click command objects, not classes: ``add`` checks that it is one and that its name is a
    lower-case word (hyphens allowed, as shells expect) no core command uses.
    """

    kind: str = "command"
    base: type = object
    reserved: tuple[str, ...] = CORE_COMMANDS

    name_rule = "lower-case (a-z, 0-9, -)"

    def valid_name(self, name: str) -> bool:
        return bool(_NAME.match(name))

    def _check_class(self, cls: Any, owner: Owner) -> None:
        import click

        if not isinstance(cls, click.Command):
            raise PluginError(
                f"plugin '{owner.plugin}' registered {cls!r} as a command, but it is not a click.Command "
                "(decorate it with @click.command or @click.group)"
            )
        if not cls.name or not self.valid_name(cls.name):
            raise PluginError(f"plugin '{owner.plugin}': command {cls.name!r} needs a {self.name_rule} name")

    def _claim(self, name: str, what: Any, owner: Owner) -> None:
        if name in self.reserved:
            raise PluginError(
                f"plugin '{owner.plugin}' registers command '{name}', which is one of mdf's own commands "
                f"({', '.join(self.reserved)}); choose another name"
            )
        super()._claim(name, what, owner)

    def command(self, name: str) -> click.Command:
        """The command ``name`` (imported now when it was registered by reference); one that fails to import is
        replaced by a command of the same name that says why (in ``mdf --help`` and when run), so one broken
        plugin never breaks ``mdf``."""
        if name in self._classes:
            return self._classes[name]  # type: ignore[no-any-return]
        error = self._resolve(name)
        if error is None:
            return self._classes[name]  # type: ignore[no-any-return]
        return _broken(name, error)


def _broken(name: str, error: str) -> click.Command:
    import click

    def fail(args: tuple[str, ...]) -> None:
        raise PluginError(f"{error}; see `mdf plugins`")

    return click.Command(
        name,
        callback=fail,
        params=[click.Argument(["args"], nargs=-1)],
        help=f"(failed to load: {error.splitlines()[0]})",
        short_help=f"(failed to load; `mdf {name}` says why)",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    )
