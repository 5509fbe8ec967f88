"""mdf (Mega Data Factory): plugin-based pipelines over Arrow record batches, inline or on Ray.

The public face for plugin authors, and the only ``mdf`` module a plugin imports (besides :mod:`mdf.testing`):
core may move its insides freely, and tests/test_plugin_api.py checks every plugin keeps to it.

* operators: :class:`Operator`, :class:`Filter`, :class:`Refiner`, :class:`Deduplicator`, their
  :class:`Params` / :class:`DedupParams`, :class:`BatchContext`, the ``_reason`` column name :data:`REASON`;
* key state: :class:`KeyState` (the client a deduplicator's ``self.state`` is), :class:`StateType` (the base
  of bucket-side state a plugin registers), :data:`NO_MATCH`;
* readers and writers: :class:`Reader`, :class:`Writer`, :class:`Shard`, :class:`ParquetReader` (to subclass),
  :func:`expand_paths` and :func:`shard_ids` (file listing, sharding), :data:`DAMAGED_INPUT` and
  :func:`damaged_input_batch` (a damaged record goes to ``rejected``);
* plugins: :data:`hookimpl`, :class:`Registry` (what every ``mdf_register_*`` hook receives; the hooks are
  documented in :mod:`mdf.hookspecs`);
* errors: :class:`MdfError` and its kinds.
"""

from __future__ import annotations

import pluggy

hookimpl = pluggy.HookimplMarker("mdf")

from mdf.deduplicator import Deduplicator, DedupParams  # noqa: E402
from mdf.errors import (  # noqa: E402
    InputError,
    MdfError,
    MissingDependencyError,
    OperatorError,
    PluginError,
    RecipeError,
)
from mdf.io.base import DAMAGED_INPUT, Reader, Shard, Writer, damaged_input_batch  # noqa: E402
from mdf.io.parquet import ParquetReader  # noqa: E402
from mdf.io.sharding import expand_paths, shard_ids  # noqa: E402
from mdf.metrics import REASON  # noqa: E402
from mdf.operators import BatchContext, Filter, Operator, Params, Refiner  # noqa: E402
from mdf.registry import Registry  # noqa: E402
from mdf.state import NO_MATCH, KeyState, StateType  # noqa: E402

try:
    from importlib.metadata import version as _v

    __version__ = _v("mdf-core")
except Exception:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0.0.0+dev"

__all__ = [
    "DAMAGED_INPUT",
    "NO_MATCH",
    "REASON",
    "BatchContext",
    "DedupParams",
    "Deduplicator",
    "Filter",
    "InputError",
    "KeyState",
    "MdfError",
    "MissingDependencyError",
    "Operator",
    "OperatorError",
    "Params",
    "ParquetReader",
    "PluginError",
    "Reader",
    "RecipeError",
    "Refiner",
    "Registry",
    "Shard",
    "StateType",
    "Writer",
    "__version__",
    "damaged_input_batch",
    "expand_paths",
    "hookimpl",
    "shard_ids",
]
