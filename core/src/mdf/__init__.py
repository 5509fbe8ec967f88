"""mdf (Mega Data Factory): plugin-based pipelines over Arrow record batches, on every core or on Ray.

The public face for plugin authors: operator base classes, the reader/writer/executor bases, and ``hookimpl``.
Everything but ``hookimpl`` and ``__version__`` is imported on first use, so ``mdf --version`` and a plugin's
entry point stay cheap (no pyarrow compute, numpy or pydantic until an operator is built).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import pluggy

hookimpl = pluggy.HookimplMarker("mdf")

try:
    from importlib.metadata import version as _v

    __version__ = _v("mdf-core")
except Exception:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0.0.0+dev"

_EXPORTS = {
    "DAMAGED_INPUT": "mdf.io.base",
    "REASON": "mdf.metrics",
    "BatchContext": "mdf.operators",
    "DedupParams": "mdf.deduplicator",
    "Deduplicator": "mdf.deduplicator",
    "Executor": "mdf.executor.api",
    "ExecutorParams": "mdf.executor.api",
    "Filter": "mdf.operators",
    "MdfError": "mdf.errors",
    "Operator": "mdf.operators",
    "OperatorError": "mdf.errors",
    "Params": "mdf.operators",
    "PluginError": "mdf.errors",
    "Reader": "mdf.io.base",
    "RecipeError": "mdf.errors",
    "Refiner": "mdf.operators",
    "Shard": "mdf.io.base",
    "Writer": "mdf.io.base",
    "damaged_input_batch": "mdf.io.base",
    "expand_paths": "mdf.io.sharding",
    "shard_ids": "mdf.io.sharding",
}

if TYPE_CHECKING:
    from mdf.deduplicator import Deduplicator, DedupParams
    from mdf.errors import MdfError, OperatorError, PluginError, RecipeError
    from mdf.executor.api import Executor, ExecutorParams
    from mdf.io.base import DAMAGED_INPUT, Reader, Shard, Writer, damaged_input_batch
    from mdf.io.sharding import expand_paths, shard_ids
    from mdf.metrics import REASON
    from mdf.operators import BatchContext, Filter, Operator, Params, Refiner


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mdf' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "DAMAGED_INPUT",
    "REASON",
    "BatchContext",
    "DedupParams",
    "Deduplicator",
    "Executor",
    "ExecutorParams",
    "Filter",
    "MdfError",
    "Operator",
    "OperatorError",
    "Params",
    "PluginError",
    "Reader",
    "RecipeError",
    "Refiner",
    "Shard",
    "Writer",
    "__version__",
    "damaged_input_batch",
    "expand_paths",
    "hookimpl",
    "shard_ids",
]
