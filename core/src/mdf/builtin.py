"""Built-in readers, writers, executors, engine operators, modalities and cost classes, registered through the
same hooks as any plugin.

mdf-core declares this module as its entry point ``builtin`` of group ``mdf``."""

from __future__ import annotations

from mdf import hookimpl
from mdf.executor.inline import InlineExecutor
from mdf.executor.ray import RayExecutor
from mdf.io.discard import DiscardWriter
from mdf.io.jsonl import JsonlReader, JsonlWriter
from mdf.io.parquet import ParquetReader, ParquetWriter
from mdf.ops.debug import DelayRefiner, NoopRefiner
from mdf.ops.score import ScoreFilter
from mdf.profiles import COST_CLASSES, MODALITIES
from mdf.registry import Registry


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add(NoopRefiner)
    registry.add(DelayRefiner)
    registry.add(ScoreFilter)


@hookimpl
def mdf_register_readers(registry: Registry) -> None:
    registry.add(ParquetReader)
    registry.add(JsonlReader)


@hookimpl
def mdf_register_writers(registry: Registry) -> None:
    registry.add(ParquetWriter)
    registry.add(JsonlWriter)
    registry.add(DiscardWriter)


@hookimpl
def mdf_register_executors(registry: Registry) -> None:
    registry.add(InlineExecutor)
    registry.add(RayExecutor)


@hookimpl
def mdf_register_modalities(registry: Registry) -> None:
    for modality in MODALITIES:
        registry.add(modality)


@hookimpl
def mdf_register_cost_classes(registry: Registry) -> None:
    for cost_class in COST_CLASSES:
        registry.add(cost_class)
