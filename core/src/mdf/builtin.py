"""Built-in readers, writers, executors, engine operators, modalities and cost classes, registered through the
same hooks as any plugin.

Everything but the modalities and cost classes is registered by reference (``registry.add_lazy``), as the
plugins do: a 10-row Parquet run on the inline executor imported Ray's executor (its placement and parameter
models), the JSONL reader and writer, and ``score_filter`` with ``pyarrow.dataset`` -- 40-100 ms of a run's
start-up spent on modules the recipe never names (``tests/test_start_up.py`` checks the module list).

mdf-core declares this module as its entry point ``builtin`` of group ``mdf``."""

from __future__ import annotations

from mdf import hookimpl
from mdf.profiles import COST_CLASSES, MODALITIES
from mdf.registry import Registry


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add_lazy("noop_refiner", "mdf.ops.debug:NoopRefiner")
    registry.add_lazy("delay_refiner", "mdf.ops.debug:DelayRefiner")
    registry.add_lazy("score_filter", "mdf.ops.score:ScoreFilter")


@hookimpl
def mdf_register_readers(registry: Registry) -> None:
    registry.add_lazy("parquet", "mdf.io.parquet:ParquetReader")
    registry.add_lazy("jsonl", "mdf.io.jsonl:JsonlReader")


@hookimpl
def mdf_register_writers(registry: Registry) -> None:
    registry.add_lazy("parquet", "mdf.io.parquet:ParquetWriter")
    registry.add_lazy("jsonl", "mdf.io.jsonl:JsonlWriter")
    registry.add_lazy("discard", "mdf.io.discard:DiscardWriter")


@hookimpl
def mdf_register_executors(registry: Registry) -> None:
    registry.add_lazy("inline", "mdf.executor.inline:InlineExecutor")
    registry.add_lazy("ray", "mdf.executor.ray.executor:RayExecutor")


@hookimpl
def mdf_register_modalities(registry: Registry) -> None:
    for modality in MODALITIES:
        registry.add(modality)


@hookimpl
def mdf_register_cost_classes(registry: Registry) -> None:
    for cost_class in COST_CLASSES:
        registry.add(cost_class)
