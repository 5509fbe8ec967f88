"""Entry point ``dedup``: registers the deduplicators, the state types minhash_dedup(verify) and the
persistent index ask, and the ``mdf index`` command.

Everything is registered by reference (``registry.add_lazy``), so loading the plugin imports none of its
modules: a run imports the deduplicator its recipe names, and nothing of this plugin otherwise.
"""

from __future__ import annotations

from typing import Any

from mdf import Registry, hookimpl

_INDEXED = ("exact_dedup", "minhash_dedup")


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add_lazy("exact_dedup", "mdf_dedup.ops.exact:ExactDedup")
    registry.add_lazy("minhash_dedup", "mdf_dedup.ops.minhash:MinHashDedup")


@hookimpl
def mdf_register_state_types(registry: Registry) -> None:
    registry.add_lazy("minhash_band_owners", "mdf_dedup.state:BandOwners")
    registry.add_lazy("minhash_signatures", "mdf_dedup.state:Signatures")
    registry.add_lazy("dedup_index", "mdf_dedup.index.state:IndexState")


@hookimpl
def mdf_register_commands(registry: Any) -> None:
    registry.add_lazy("index", "mdf_dedup.cli:command")


@hookimpl
def mdf_recipe_loaded(recipe: Any) -> None:
    """An index made with other key settings, or held by another live ``update`` run, fails the recipe before any
    work. Only a recipe whose deduplicator names an ``index:`` imports the check (and the operators)."""
    if any(s.name in _INDEXED and s.params.get("index") for st in recipe.stages for s in st.operators):
        from mdf_dedup.index.check import check_indexes

        check_indexes(recipe)
