"""Registries that plugins add classes to, with owner tracking and did-you-mean look-ups."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from mdf.errors import PluginError, RecipeError

T = TypeVar("T", bound=type)


@dataclass(frozen=True)
class Owner:
    """Who contributed a class: the plugin name and the distribution (package) that ships it."""

    plugin: str
    distribution: str
    version: str


BUILTIN = Owner("builtin", "mdf-core", "")


@dataclass
class Registry(Generic[T]):
    """Name -> class for one kind (operators, readers or writers).

    ``add`` checks the base class and refuses a name already taken, naming both plugins, so two plugins can
    never silently shadow each other.
    """

    kind: str
    base: type
    current_owner: Owner = BUILTIN
    failed: list[Owner] = field(default_factory=list)
    """Plugins that failed to load: an unknown name may be one of theirs (set by :mod:`mdf.plugins`)."""
    _classes: dict[str, type] = field(default_factory=dict)
    _owners: dict[str, Owner] = field(default_factory=dict)

    def add(self, cls: type) -> type:
        owner = self.current_owner
        if not isinstance(cls, type) or not issubclass(cls, self.base):
            raise PluginError(
                f"plugin '{owner.plugin}' registered {cls!r} as a {self.kind}, but it does not subclass "
                f"{self.base.__module__}.{self.base.__name__}"
            )
        name = getattr(cls, "name", "")
        if not name or not name.isidentifier():
            raise PluginError(f"plugin '{owner.plugin}': {self.kind} {cls.__name__} needs a snake_case `name`")
        if name in self._classes and self._classes[name] is not cls:
            other = self._owners[name]
            raise PluginError(
                f"plugin '{owner.plugin}' registers {self.kind} '{name}', already registered by plugin "
                f"'{other.plugin}' ({other.distribution}); rename one of them"
            )
        self._classes[name] = cls
        self._owners[name] = owner
        return cls

    def get(self, name: str, path: str = "") -> type:
        """Return the class for ``name`` or raise a :class:`RecipeError` with a did-you-mean."""
        try:
            return self._classes[name]
        except KeyError:
            raise RecipeError(self.unknown_message(name), path) from None

    def unknown_message(self, name: str) -> str:
        close = difflib.get_close_matches(str(name), list(self._classes), n=1, cutoff=0.6)
        named = [o for o in self.failed if _may_provide(o, str(name))]
        suspects = named or ([] if close else self.failed)
        hints = []
        if suspects:
            names = ", ".join(f"'{o.plugin}' ({o.distribution})" for o in suspects)
            hints.append(f"plugin {names} failed to load and may provide it (see `mdf plugins`)")
        if close:
            hints.append(f"did you mean '{close[0]}'?")
        if not hints:
            hints.append(f"known: {', '.join(sorted(self._classes)) or 'none'}")
        return f"unknown {self.kind} '{name}'; " + "; or ".join(hints)

    def owner(self, name: str) -> Owner:
        return self._owners[name]

    def names(self) -> list[str]:
        return sorted(self._classes)

    def items(self) -> list[tuple[str, type]]:
        return [(n, self._classes[n]) for n in self.names()]

    def __contains__(self, name: object) -> bool:
        return name in self._classes


def _may_provide(owner: Owner, name: str) -> bool:
    """A failed plugin whose name (or distribution without ``mdf-``) appears in ``name``, e.g. image_*."""
    stems = {owner.plugin.lower(), owner.distribution.lower().removeprefix("mdf-").replace("-", "_")}
    return any(stem and stem in name.lower() for stem in stems)
