"""Entry point ``dedup``: registers the deduplicators and the state types minhash_dedup(verify) asks.

Everything is registered by reference (``registry.add_lazy``), so loading the plugin imports none of its
modules: a run imports the deduplicator its recipe names, and nothing of this plugin otherwise.
"""

from __future__ import annotations

from mdf import Registry, hookimpl


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add_lazy("exact_dedup", "mdf_dedup.ops.exact:ExactDedup")
    registry.add_lazy("minhash_dedup", "mdf_dedup.ops.minhash:MinHashDedup")


@hookimpl
def mdf_register_state_types(registry: Registry) -> None:
    registry.add_lazy("minhash_band_owners", "mdf_dedup.state:BandOwners")
    registry.add_lazy("minhash_signatures", "mdf_dedup.state:Signatures")
