"""The one plugin-manager factory: built-ins first, then entry points of group ``mdf``.

The built-ins (``mdf.builtin``: Parquet/JSONL readers and writers, the inline and Ray executors) are a plugin
of the distribution mdf-core, found through its own entry point like any other, so the plugin manager depends
on no implementation and the executors may use the plugin manager without an import loop.

Nothing is imported or registered at import time of :mod:`mdf`; the first caller of :func:`load_plugins`
pays for it once per process. A plugin that fails to import, or whose hook raises, is recorded with its
error (``mdf plugins`` shows it) and skipped, so one broken package never takes the others down.
``MDF_DISABLE_PLUGINS=a,b`` blocks plugins by entry-point name.

Plugins may register operators by reference (:meth:`mdf.registry.Registry.add_lazy`), so a run imports only
the operator modules its recipe names. The checks that need a class (its state types and declarations are
registered) then run when it is first imported; :meth:`Plugins.resolve_all` imports everything for
``mdf ops`` and ``mdf plugins``, recording what fails as its plugin's error.
"""

from __future__ import annotations

import os
import traceback
from functools import lru_cache
from typing import Any

import pluggy

from mdf import hookspecs
from mdf.commands import CommandRegistry
from mdf.entry_group import GROUP, mdf_entry_points
from mdf.errors import PluginError
from mdf.executor.api import Executor
from mdf.io.base import Reader, Writer
from mdf.operators import Operator
from mdf.plugin_set import HOOKS, PluginInfo, Plugins
from mdf.profiles import CostClass, Modality
from mdf.registry import BUILTIN, Owner, Registry
from mdf.state.types import StateType

ENTRY_POINT_GROUP = GROUP
DISABLE_ENV = "MDF_DISABLE_PLUGINS"
BUILTIN_ENTRY_POINT = "builtin"


def disabled_names() -> frozenset[str]:
    return frozenset(n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",") if n.strip())


def get_plugin_manager(disabled: frozenset[str] = frozenset()) -> tuple[pluggy.PluginManager, list[PluginInfo]]:
    """Create a plugin manager with the built-ins and every importable, non-disabled entry point."""
    pm = pluggy.PluginManager("mdf")
    pm.add_hookspecs(hookspecs)
    infos = []

    def builtin_first(ep: Any) -> tuple[bool, str]:
        return (not _is_builtin(ep), ep.name)

    for ep in sorted(mdf_entry_points(fresh=True), key=builtin_first):
        dist = ep.dist.name if ep.dist else "?"
        info = PluginInfo(ep.name, dist, ep.dist.version if ep.dist else "?")
        infos.append(info)
        if ep.name in disabled and not _is_builtin(ep):
            info.disabled = True
            continue
        try:
            pm.register(ep.load(), name=ep.name)
        except Exception as exc:  # a broken plugin is reported, not fatal
            info.error = f"{type(exc).__name__}: {exc}"
    pm.check_pending()
    return pm, infos


@lru_cache(maxsize=4)
def _load(disabled: frozenset[str]) -> Plugins:
    pm, infos = get_plugin_manager(disabled)
    by_name = {i.name: i for i in infos}
    regs = {
        "operators": Registry("operator", Operator),
        "readers": Registry("reader", Reader),
        "writers": Registry("writer", Writer),
        "state_types": Registry("state type", StateType),
        "executors": Registry("executor", Executor),
        "modalities": Registry("modality", Modality),
        "cost_classes": Registry("cost class", CostClass),
        "commands": CommandRegistry(),
    }
    for hook, key in HOOKS.items():
        registry = regs[key]
        for impl in getattr(pm.hook, hook).get_hookimpls():
            info = by_name[impl.plugin_name]
            if info.error:
                continue
            registry.current_owner = Owner(info.name, info.distribution, info.version)
            before = set(registry.names())
            try:
                impl.function(registry=registry)
            except PluginError as exc:
                info.error = str(exc)
            except Exception as exc:
                info.error = f"hook {hook} raised {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
            info.contributed.setdefault(key, []).extend(sorted(set(registry.names()) - before))
    _check_state_types(regs["operators"], regs["state_types"], by_name)
    _check_declarations(regs, by_name)
    for key in ("operators", "readers"):  # the same checks for classes registered by reference, once imported
        regs[key].check = lambda name, cls, key=key: _problem(regs, key, name, cls)
    failed = [Owner(i.name, i.distribution, i.version) for i in infos if i.error]
    for registry in regs.values():
        registry.failed = failed
    return Plugins(pm, infos=infos, **regs)


def _check_state_types(operators: Registry, state_types: Registry, by_name: dict[str, PluginInfo]) -> None:
    """A deduplicator whose state type no plugin registers would fail mid-run; report it at load instead
    (for the classes imported so far: the others are checked when first imported)."""
    for name, cls in operators.loaded():
        problem = _state_type_problem(state_types, name, cls)
        if problem:
            by_name[operators.owner(name).plugin].error = problem


def _state_type_problem(state_types: Registry, name: str, cls: type) -> str | None:
    for st in getattr(cls, "state_types", ()):
        if st.name not in state_types or state_types.get(st.name) is not st:
            return (
                f"operator '{name}' uses state type {st.__module__}.{st.__name__} ('{st.name}'), which no "
                "plugin registers; add registry.add(...) for it in an mdf_register_state_types hook"
            )
    return None


_DECLARED = {"operators": (("modality", "modalities"), ("cost_class", "cost_classes")),
             "readers": (("modality", "modalities"),)}  # fmt: skip


def _check_declarations(regs: dict[str, Registry], by_name: dict[str, PluginInfo]) -> None:
    """An operator or reader naming a modality or cost class no plugin registers cannot be planned for; report
    it at load, as an error of its plugin, naming what is known."""
    for key in _DECLARED:
        registry = regs[key]
        for name, cls in registry.loaded():
            problem = _declaration_problem(regs, key, name, cls)
            if problem:
                by_name[registry.owner(name).plugin].error = problem


def _declaration_problem(regs: dict[str, Registry], key: str, name: str, cls: type) -> str | None:
    for attr, known in _DECLARED[key]:
        value = getattr(cls, attr, None)
        if value is None or value in regs[known]:
            continue
        return (
            f"{regs[key].kind} '{name}' declares {attr} = {value!r}, which no plugin registers (known: "
            f"{', '.join(regs[known].names())}); use one of those or register it in an mdf_register_{known} hook"
        )
    return None


def _problem(regs: dict[str, Registry], key: str, name: str, cls: type) -> str | None:
    """What :func:`_load` would have reported about ``cls``, for a class imported after the load."""
    state = _state_type_problem(regs["state_types"], name, cls) if key == "operators" else None
    return state or _declaration_problem(regs, key, name, cls)


def load_plugins() -> Plugins:
    """Return the process-wide plugin set (honouring ``MDF_DISABLE_PLUGINS`` as it is now)."""
    return _load(disabled_names())


def _is_builtin(ep: Any) -> bool:
    return bool(ep.name == BUILTIN_ENTRY_POINT and ep.dist is not None and ep.dist.name == BUILTIN.distribution)
