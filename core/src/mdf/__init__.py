"""mdf (Mega Data Factory): plugin-based pipelines over Arrow record batches, on every core or on Ray.

The public face for plugin authors, and the only ``mdf`` module a plugin imports (besides :mod:`mdf.testing`):
core may move its insides freely, and tests/test_plugin_api.py checks every plugin keeps to it.

* operators: :class:`Operator`, :class:`Filter`, :class:`Refiner`, :class:`Deduplicator`, their
  :class:`Params` / :class:`DedupParams`, :class:`BatchContext`, the ``_reason`` column name :data:`REASON`;
* key state: :class:`KeyState` (the client a deduplicator's ``self.state`` is), :class:`StateType` (the base
  of bucket-side state a plugin registers), :data:`NO_MATCH`;
* parameters naming files the run reads (a model, a word list; ``--resume`` refuses a changed one):
  :data:`InputFile`, :class:`ReadsFile` (:mod:`mdf.named_files`);
* readers and writers: :class:`Reader`, :class:`Writer`, :class:`Shard`, :class:`ParquetReader` (to subclass),
  :func:`expand_paths`, :func:`glob_files` and :func:`shard_ids` (file listing, sharding), :data:`DAMAGED_INPUT` and
  :func:`damaged_input_batch` (a damaged record goes to ``rejected``);
* batch sizing: :class:`Modality` and :class:`CostClass` (what readers and operators declare by name, and
  what ``mdf_register_modalities`` / ``mdf_register_cost_classes`` add);
* executors: :class:`Executor` and :class:`ExecutorParams` (what ``mdf_register_executors`` adds), the shard loop
  every executor runs (:class:`ShardRunner`), its bookkeeping (:class:`PassCounter`) and the passes, key state and
  checkpoints around it (:func:`run_passes`), and the typed metrics an executor returns: :class:`RunMetrics`,
  :class:`StageMetrics`, :class:`OperatorMetrics`, :class:`ExecutorMetrics` (subclass it for an executor's own
  record; ``metrics.json`` is versioned);
* plugins: :data:`hookimpl`, :class:`Registry` (what every ``mdf_register_*`` hook receives; the hooks are
  documented in :mod:`mdf.hookspecs`);
* native kernels: :func:`native_kernel` (``mdf_kernels.<name>`` or one install line), :func:`has_native_kernel`,
  :data:`KERNELS` (an operator's ``requires``), and :func:`with_columns` (add or replace result columns);
* recipes: :func:`load_recipe` (read, override, validate; a :class:`RecipeError` names the YAML path), for
  plugins that check a recipe before handing it elsewhere (``mdf slurm run`` does, before ``sbatch``);
* errors: :class:`MdfError` and its kinds.

Everything but ``hookimpl`` and ``__version__`` is imported on first use, so ``mdf --version`` and a plugin's
entry point stay cheap (no pyarrow compute, numpy or pydantic until an operator is built).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

from mdf.lazy import exports as lazy_exports  # public: plugins export their classes lazily with it too

hookimpl = pluggy.HookimplMarker("mdf")

try:
    from importlib.metadata import version as _v

    __version__ = _v("mdf-core")
except Exception:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0.0.0+dev"

_EXPORTS = {
    "DAMAGED_INPUT": "mdf.io.base",
    "NO_MATCH": "mdf.state",
    "REASON": "mdf.metrics",
    "REASON_DETAIL": "mdf.metrics",
    "BatchContext": "mdf.operators",
    "CostClass": "mdf.profiles",
    "DedupParams": "mdf.deduplicator",
    "Deduplicator": "mdf.deduplicator",
    "Executor": "mdf.executor.api",
    "ExecutorParams": "mdf.executor.api",
    "ExecutorMetrics": "mdf.run_stats",
    "ExecutorSection": "mdf.run_stats",
    "Filter": "mdf.operators",
    "InputError": "mdf.errors",
    "InputFile": "mdf.named_files",
    "KERNELS": "mdf.native",
    "KeyState": "mdf.state",
    "MdfError": "mdf.errors",
    "MissingDependencyError": "mdf.errors",
    "Modality": "mdf.profiles",
    "Operator": "mdf.operators",
    "OperatorMetrics": "mdf.metrics",
    "OperatorError": "mdf.errors",
    "Params": "mdf.operators",
    "PassCounter": "mdf.executor.batches",
    "ParquetReader": "mdf.io.parquet",
    "PluginError": "mdf.errors",
    "Reader": "mdf.io.base",
    "ReadsFile": "mdf.named_files",
    "RecipeError": "mdf.errors",
    "Refiner": "mdf.operators",
    "RunMetrics": "mdf.metrics",
    "Registry": "mdf.registry",
    "Shard": "mdf.io.base",
    "ShardRunner": "mdf.executor.shard",
    "StageMetrics": "mdf.metrics",
    "StateType": "mdf.state",
    "Writer": "mdf.io.base",
    "damaged_input_batch": "mdf.io.base",
    "expand_paths": "mdf.io.sharding",
    "glob_files": "mdf.io.sharding",
    "has_native_kernel": "mdf.native",
    "as_numpy": "mdf.arrowpy",
    "lit": "mdf.arrowpy",
    "load_recipe": "mdf.resolve",
    "native_kernel": "mdf.native",
    "run_passes": "mdf.executor.passes",
    "with_columns": "mdf.native",
    "shard_ids": "mdf.io.sharding",
    "shard_records": "mdf.slices",
    "slice_plan": "mdf.slices",
}

if TYPE_CHECKING:
    from mdf.arrowpy import as_numpy, lit
    from mdf.deduplicator import Deduplicator, DedupParams
    from mdf.errors import InputError, MdfError, MissingDependencyError, OperatorError, PluginError, RecipeError
    from mdf.executor.api import Executor, ExecutorParams
    from mdf.executor.batches import PassCounter
    from mdf.executor.passes import run_passes
    from mdf.executor.shard import ShardRunner
    from mdf.io.base import DAMAGED_INPUT, Reader, Shard, Writer, damaged_input_batch
    from mdf.io.parquet import ParquetReader
    from mdf.io.sharding import expand_paths, glob_files, shard_ids
    from mdf.metrics import REASON, REASON_DETAIL, OperatorMetrics, RunMetrics, StageMetrics
    from mdf.named_files import InputFile, ReadsFile
    from mdf.native import KERNELS, has_native_kernel, native_kernel, with_columns
    from mdf.operators import BatchContext, Filter, Operator, Params, Refiner
    from mdf.profiles import CostClass, Modality
    from mdf.registry import Registry
    from mdf.resolve import load_recipe
    from mdf.run_stats import ExecutorMetrics, ExecutorSection
    from mdf.slices import shard_records, slice_plan
    from mdf.state import NO_MATCH, KeyState, StateType


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "DAMAGED_INPUT",
    "KERNELS",
    "NO_MATCH",
    "REASON",
    "REASON_DETAIL",
    "BatchContext",
    "CostClass",
    "DedupParams",
    "Deduplicator",
    "Executor",
    "ExecutorMetrics",
    "ExecutorParams",
    "ExecutorSection",
    "Filter",
    "InputError",
    "InputFile",
    "KeyState",
    "MdfError",
    "MissingDependencyError",
    "Modality",
    "Operator",
    "OperatorError",
    "OperatorMetrics",
    "Params",
    "ParquetReader",
    "PassCounter",
    "PluginError",
    "Reader",
    "ReadsFile",
    "RecipeError",
    "Refiner",
    "Registry",
    "RunMetrics",
    "Shard",
    "ShardRunner",
    "StageMetrics",
    "StateType",
    "Writer",
    "__version__",
    "as_numpy",
    "damaged_input_batch",
    "expand_paths",
    "glob_files",
    "has_native_kernel",
    "hookimpl",
    "lazy_exports",
    "lit",
    "load_recipe",
    "native_kernel",
    "run_passes",
    "shard_ids",
    "shard_records",
    "slice_plan",
    "with_columns",
]
