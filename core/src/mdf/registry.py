"""Registries that plugins add classes to, with owner tracking and did-you-mean look-ups.

A plugin may register a class by reference (:meth:`Registry.add_lazy`: a name and ``"module:Class"``) instead
of the class itself, so that loading the plugin imports none of its operator modules: a run imports only the
operators its recipe names (an unused operator module can cost 100 ms: regex tables, word lists, numpy), while
``mdf ops`` and ``mdf plugins`` resolve every reference and list what fails to import as its plugin's error.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
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
    check: Callable[[str, type], str | None] | None = None
    """Called on a class registered by reference once it is imported: a message when the class breaks a rule
    that needs the other registries (an unregistered state type or modality), else None (set by
    :mod:`mdf.plugins`, which checks classes added directly at load)."""
    _classes: dict[str, type] = field(default_factory=dict)
    _owners: dict[str, Owner] = field(default_factory=dict)
    _refs: dict[str, str] = field(default_factory=dict)
    _errors: dict[str, str] = field(default_factory=dict)

    def add(self, cls: type) -> type:
        owner = self.current_owner
        self._check_class(cls, owner)
        name = cls.name  # type: ignore[attr-defined]
        self._claim(name, cls, owner)
        self._classes[name] = cls
        self._owners[name] = owner
        return cls

    def add_lazy(self, name: str, ref: str) -> None:
        """Register the class at ``ref`` (``"package.module:Class"``) under ``name`` without importing it.

        The module is imported the first time the class is asked for (:meth:`get`, :meth:`items`); the
        class must then subclass this registry's base and carry the same ``name``, or the look-up fails
        naming the plugin. Use it for operators and readers whose modules cost time to import.
        """
        owner = self.current_owner
        module, _, attr = ref.partition(":")
        if not self.valid_name(name) or not module or not attr:
            raise PluginError(
                f"plugin '{owner.plugin}': add_lazy({name!r}, {ref!r}) needs a {self.name_rule} name and a "
                "'package.module:Class' reference"
            )
        self._claim(name, ref, owner)
        self._refs[name] = ref
        self._owners[name] = owner

    name_rule = "snake_case"

    def valid_name(self, name: str) -> bool:
        """Whether ``name`` may name an entry (a recipe key: a Python identifier)."""
        return name.isidentifier()

    def _check_class(self, cls: object, owner: Owner) -> None:
        if not isinstance(cls, type) or not issubclass(cls, self.base):
            raise PluginError(
                f"plugin '{owner.plugin}' registered {cls!r} as a {self.kind}, but it does not subclass "
                f"{self.base.__module__}.{self.base.__name__}"
            )
        name = getattr(cls, "name", "")
        if not name or not self.valid_name(name):
            raise PluginError(f"plugin '{owner.plugin}': {self.kind} {cls.__name__} needs a {self.name_rule} `name`")

    def _claim(self, name: str, what: type | str, owner: Owner) -> None:
        """Refuse a name another plugin took (the same class or reference registered twice is fine)."""
        taken = self._classes.get(name) or self._refs.get(name)
        if taken is not None and taken is not what and taken != what:
            other = self._owners[name]
            raise PluginError(
                f"plugin '{owner.plugin}' registers {self.kind} '{name}', already registered by plugin "
                f"'{other.plugin}' ({other.distribution}); rename one of them"
            )

    def get(self, name: str, path: str = "") -> type:
        """Return the class for ``name`` (importing it when it was registered by reference), or raise a
        :class:`RecipeError` with a did-you-mean, or naming the plugin whose class failed to import."""
        cls = self._classes.get(name)
        if cls is not None:
            return cls
        if name not in self._refs:
            raise RecipeError(self.unknown_message(name), path)
        error = self._resolve(name)
        if error:
            raise RecipeError(f"{error}; see `mdf plugins`", path)
        return self._classes[name]

    def _resolve(self, name: str) -> str | None:
        """Import a class registered by reference: None when it is now in ``_classes``, else why not."""
        if name in self._errors:
            return self._errors[name]
        ref, owner = self._refs[name], self._owners[name]
        module, _, attr = ref.partition(":")
        where = f"plugin '{owner.plugin}' ({owner.distribution}): {self.kind} '{name}' ({ref})"
        try:
            cls = getattr(importlib.import_module(module), attr)
            self._check_class(cls, owner)
            if cls.name != name:
                raise PluginError(f"the class is named '{cls.name}', registered as '{name}'")
            problem = self.check(name, cls) if self.check is not None else None
            if problem:
                raise PluginError(problem)
        except Exception as exc:  # a broken plugin module fails its own look-ups, never the others'
            self._errors[name] = f"{where} failed to load: {type(exc).__name__}: {exc}"
            return self._errors[name]
        self._classes[name] = cls
        return None

    def resolve_all(self) -> dict[str, str]:
        """Import every class registered by reference (``mdf ops``, ``mdf plugins``): ``{name: error}`` of those
        that failed, which :meth:`items` then leaves out."""
        for name in self._refs:
            if name not in self._classes:
                self._resolve(name)
        return {n: e for n, e in self._errors.items() if n in self._refs}

    def loaded(self) -> list[tuple[str, type]]:
        """The classes imported so far, without importing any: what load-time checks can look at cheaply."""
        return sorted(self._classes.items())

    def unknown_message(self, name: str) -> str:
        close = difflib.get_close_matches(str(name), self.names(), n=1, cutoff=0.6)
        named = [o for o in self.failed if _may_provide(o, str(name))]
        suspects = named or ([] if close else self.failed)
        hints = []
        if suspects:
            names = ", ".join(f"'{o.plugin}' ({o.distribution})" for o in suspects)
            hints.append(f"plugin {names} failed to load and may provide it (see `mdf plugins`)")
        if close:
            hints.append(f"did you mean '{close[0]}'?")
        if not hints:
            hints.append(f"known: {', '.join(self.names()) or 'none'}")
        return f"unknown {self.kind} '{name}'; " + "; or ".join(hints)

    def owner(self, name: str) -> Owner:
        return self._owners[name]

    def names(self) -> list[str]:
        """Every registered name, imported or not (imports nothing)."""
        return sorted({*self._classes, *self._refs})

    def items(self) -> list[tuple[str, type]]:
        """Every class, importing those registered by reference; one that fails to import is left out (its
        error is in :meth:`resolve_all`'s answer)."""
        self.resolve_all()
        return sorted(self._classes.items())

    def __contains__(self, name: object) -> bool:
        return name in self._classes or name in self._refs


def _may_provide(owner: Owner, name: str) -> bool:
    """A failed plugin whose name (or distribution without ``mdf-``) appears in ``name``, e.g. image_*."""
    stems = {owner.plugin.lower(), owner.distribution.lower().removeprefix("mdf-").replace("-", "_")}
    return any(stem and stem in name.lower() for stem in stems)
