"""The Rust kernels (``mdf-kernels``) as every plugin finds them, and the column helper their operators share.

One finder, so a missing or too-old wheel reads the same whichever operator needs it (the text, image and
dedup plugins each had their own, with three different install lines). Core itself never requires the wheel:
an operator declares ``requires = KERNELS`` and the registry names the install before any work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from mdf.errors import MissingDependencyError

KERNELS = {"mdf_kernels": "mdf-kernels"}
"""``requires`` of an operator that calls a kernel: the import name and the pip spec that provides it."""
INSTALL = "pip install mdf-kernels (or pip install ./rust from the mdf repository)"


def native_kernel(name: str, who: str) -> Callable[..., Any]:
    """``mdf_kernels.<name>``, or a :class:`MissingDependencyError` naming ``who`` needs it and the install.

    A wheel built before a kernel existed imports fine but lacks the function, hence the attribute check rather
    than only the import."""
    try:
        import mdf_kernels
    except ImportError:
        raise MissingDependencyError(f"{who} needs the Rust kernels ({name}): {INSTALL}") from None
    fn = getattr(mdf_kernels, name, None)
    if fn is None:
        version = getattr(mdf_kernels, "__version__", "?")
        raise MissingDependencyError(
            f"{who}: the installed mdf-kernels {version} has no '{name}' (built before it); "
            f"pip install -U mdf-kernels (or pip install ./rust from the mdf repository)"
        )
    return fn


def has_native_kernel(name: str) -> bool:
    """True when the installed ``mdf-kernels`` has ``name`` (an operator's optional native engine)."""
    try:
        import mdf_kernels
    except ImportError:
        return False
    return hasattr(mdf_kernels, name)


def with_columns(batch: pa.RecordBatch, columns: dict[str, pa.Array]) -> pa.RecordBatch:
    """Add each column, replacing one of the same name in place (a re-run, or an input that had it already)."""
    for name, values in columns.items():
        idx = batch.schema.get_field_index(name)
        batch = batch.set_column(idx, name, values) if idx >= 0 else batch.append_column(name, values)
    return batch
