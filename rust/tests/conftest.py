"""Shared helpers for the mdf_kernels tests."""

import pyarrow as pa
import pytest


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


@pytest.fixture(params=["plain", "sliced", "chunked"])
def layout(request):
    return request.param
