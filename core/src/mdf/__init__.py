"""mdf (Mega Data Factory): plugin-based pipelines over Arrow record batches, inline or on Ray.

The public face for plugin authors: operator base classes, the reader/writer bases, and ``hookimpl``.
"""

from __future__ import annotations

import pluggy

hookimpl = pluggy.HookimplMarker("mdf")

from mdf.deduplicator import Deduplicator, DedupParams  # noqa: E402
from mdf.errors import MdfError, OperatorError, PluginError, RecipeError  # noqa: E402
from mdf.io.base import DAMAGED_INPUT, Reader, Shard, Writer, damaged_input_batch  # noqa: E402
from mdf.io.sharding import expand_paths, shard_ids  # noqa: E402
from mdf.metrics import REASON, REASON_DETAIL  # noqa: E402
from mdf.operators import BatchContext, Filter, Operator, Params, Refiner  # noqa: E402

try:
    from importlib.metadata import version as _v

    __version__ = _v("mdf-core")
except Exception:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0.0.0+dev"

__all__ = [
    "DAMAGED_INPUT",
    "REASON",
    "REASON_DETAIL",
    "BatchContext",
    "DedupParams",
    "Deduplicator",
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
