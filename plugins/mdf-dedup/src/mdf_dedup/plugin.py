"""Entry point ``dedup``: registers the deduplicators."""

from __future__ import annotations

from mdf import hookimpl
from mdf.registry import Registry
from mdf_dedup.ops.exact import ExactDedup
from mdf_dedup.ops.minhash import MinHashDedup


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add(ExactDedup)
    registry.add(MinHashDedup)
