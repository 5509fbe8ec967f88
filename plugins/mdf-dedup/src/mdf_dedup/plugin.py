"""Entry point ``dedup``: registers the deduplicators and the state types minhash_dedup(verify) asks."""

from __future__ import annotations

from mdf import Registry, hookimpl
from mdf_dedup.index.check import check_indexes
from mdf_dedup.index.state import IndexState
from mdf_dedup.ops.exact import ExactDedup
from mdf_dedup.ops.minhash import MinHashDedup
from mdf_dedup.state import BandOwners, Signatures


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add(ExactDedup)
    registry.add(MinHashDedup)


@hookimpl
def mdf_register_state_types(registry: Registry) -> None:
    registry.add(BandOwners)
    registry.add(Signatures)
    registry.add(IndexState)


@hookimpl
def mdf_recipe_loaded(recipe: object) -> None:
    check_indexes(recipe)
