"""A loaded set of plugins: the plugin manager, the registries its hooks filled, and a report per plugin.

It sits below everything that is handed a loaded set (the plan, the batch-size planner, the executors) and
names no kind of component: :mod:`mdf.plugins`, which loads the set, gives each registry its base class. So a
module may name the set it is handed without importing the loader, and the loader may import every kind (the
executor base included) without a loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pluggy

from mdf.commands import CommandRegistry
from mdf.registry import Registry

HOOKS = {
    # hook -> the Plugins field (registry) it fills
    "mdf_register_operators": "operators",
    "mdf_register_readers": "readers",
    "mdf_register_writers": "writers",
    "mdf_register_state_types": "state_types",
    "mdf_register_executors": "executors",
    "mdf_register_modalities": "modalities",
    "mdf_register_cost_classes": "cost_classes",
    "mdf_register_commands": "commands",
}


@dataclass
class PluginInfo:
    """What ``mdf plugins`` prints about one plugin."""

    name: str
    distribution: str
    version: str
    contributed: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None
    disabled: bool = False


@dataclass
class Plugins:
    """A loaded plugin manager with its registries and a report per plugin."""

    manager: pluggy.PluginManager
    operators: Registry
    readers: Registry
    writers: Registry
    infos: list[PluginInfo]
    state_types: Registry
    executors: Registry
    modalities: Registry
    cost_classes: Registry
    commands: CommandRegistry

    def registries(self) -> list[Registry]:
        return [getattr(self, key) for key in HOOKS.values()]

    def registry(self, hook: str) -> Registry:
        """The registry the hook ``hook`` (``mdf_register_*``) fills."""
        return getattr(self, HOOKS[hook])  # type: ignore[no-any-return]

    def resolve_all(self) -> None:
        """Import every class registered by reference; one that fails becomes its plugin's error (the first
        failure a plugin has is kept). For listing commands, never for a run."""
        by_name = {i.name: i for i in self.infos}
        for registry in self.registries():
            for name, error in registry.resolve_all().items():
                info = by_name.get(registry.owner(name).plugin)
                if info is not None and not info.error:
                    info.error = error
