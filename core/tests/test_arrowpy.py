"""``lit`` and ``as_numpy`` (:mod:`mdf.arrowpy`) give what pyarrow's own calls give, without pyarrow's pandas
machinery: the operators that switched to them must not change a single value or type."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from mdf import as_numpy, lit

VALUES = [True, False, 0, -5, 2**63 - 1, -(2**63), 1.5, float("inf"), "", "é", b"x", None]


@pytest.mark.parametrize("value", VALUES)
def test_lit_is_the_scalar_pyarrow_infers(value):
    """Seen red with float mapped to float32 (1.5 kept its value, the type differed) and with ``isinstance(value,
    int)`` for the int test (True became int64 1)."""
    got, want = lit(value), pa.scalar(value)
    assert got.type == want.type and got.equals(want)


def test_lit_refuses_what_pyarrow_refuses():
    with pytest.raises(OverflowError):
        pa.scalar(2**63)
    with pytest.raises(OverflowError):
        lit(2**63)


TYPES = [pa.int8(), pa.int32(), pa.uint16(), pa.uint64(), pa.float16(), pa.float32(), pa.float64(), pa.bool_()]


@pytest.mark.parametrize("typ", TYPES, ids=str)
@pytest.mark.parametrize("rows", [0, 1, 7, 8, 9, 70])
@pytest.mark.parametrize("offset", [0, 1, 3, 8])
def test_as_numpy_is_to_numpy(typ, rows, offset):
    """Sliced arrays included: their data starts ``offset`` values (bits, for booleans) into the buffer. Seen red
    with the offset left out (every sliced case), with the bit order of booleans reversed, and with the number
    views writeable (``np.frombuffer`` over a pyarrow buffer is; ``to_numpy`` gives them read-only)."""
    values = [i % 3 == 1 for i in range(rows)] if typ == pa.bool_() else [(7 * i) % 11 for i in range(rows)]
    arr = pa.array(values, typ).slice(min(offset, rows))
    got, want = as_numpy(arr), arr.to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)
    assert got.flags.writeable == want.flags.writeable  # a view of Arrow's immutable buffer must stay read-only


@pytest.mark.parametrize(
    "arr",
    [pa.array([1, None, 3], pa.int64()), pa.array([True, None]), pa.array(["a", "b"]), pa.chunked_array([[1], [2]])],
    ids=["nulls", "bool-nulls", "strings", "chunked"],
)
def test_as_numpy_leaves_the_rest_to_pyarrow(arr):
    got, want = as_numpy(arr), arr.to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype
    assert [str(x) for x in got] == [str(x) for x in want]  # NaN != NaN: compare as text
