"""Column layouts every kernel test runs on.

A module of its own, not ``conftest``: imported as ``conftest``, it would be whichever test folder's
conftest Python loaded first when one pytest run collects several packages (``from conftest import
variants`` failed with an ImportError when ``rust/tests`` and ``plugins/mdf-dedup/tests`` ran together)."""

import pyarrow as pa


def variants(values, type_=None):
    """The same logical column as a plain array, a sliced array (offset != 0) and a
    ChunkedArray, so every kernel is checked on all three layouts."""
    type_ = type_ or pa.string()
    full = pa.array(["pad-front", *list(values), "pad-back"], type=type_)
    mid = len(values) // 2
    return {
        "plain": pa.array(values, type=type_),
        "sliced": full.slice(1, len(values)),
        "chunked": pa.chunked_array(
            [pa.array(values[:mid], type=type_), pa.array(values[mid:], type=type_)], type=type_
        ),
    }
