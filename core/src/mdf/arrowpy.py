"""Python values into pyarrow and Arrow arrays into numpy without pyarrow's pandas machinery.

Where pandas is installed, pyarrow imports it (0.5 s, against a 10-row run's 0.3 s) on the first of: a type
inferred for a Python value (``pc.less(lengths, 200)``, ``pa.scalar("x")``), and an ``Array.to_numpy()`` (which
goes through its pandas converter, even for a zero-copy view). :mod:`mdf.pandas_probe` covers pyarrow's third
way in. ``lit(200)`` is the scalar pyarrow would infer, typed up front; ``as_numpy(arr)`` is ``arr.to_numpy(
zero_copy_only=False)`` read from the buffers for the arrays mdf's run paths turn into numpy (numbers and
booleans without nulls), and ``to_numpy`` for the rest. A plugin that uses neither still works, and pays that
import once per process.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_TYPES: dict[type, pa.DataType] = {bool: pa.bool_(), float: pa.float64(), str: pa.string(), bytes: pa.binary()}
_INT64 = (-(2**63), 2**63 - 1)


def lit(value: bool | int | float | str | bytes | None) -> pa.Scalar:
    """``pa.scalar(value)`` with the type pyarrow would infer for it: bool, int64, float64, string, binary, null.

    An int outside int64 is left to pyarrow (it infers uint64 or refuses it, as before)."""
    if value is None:
        return pa.scalar(None, pa.null())
    kind = type(value)
    if kind is int:
        if _INT64[0] <= value <= _INT64[1]:  # type: ignore[operator]
            return pa.scalar(value, pa.int64())
        return pa.scalar(value)
    typ = _TYPES.get(kind)
    return pa.scalar(value, typ) if typ is not None else pa.scalar(value)


def as_numpy(arr: pa.Array) -> np.ndarray:
    """``arr.to_numpy(zero_copy_only=False)``: a read-only view of a null-free number array's buffer, a new bool
    array for a null-free boolean one, and pyarrow's conversion for anything else (nulls, other types)."""
    if isinstance(arr, pa.Array) and not arr.null_count:
        kind = arr.type
        if pa.types.is_integer(kind) or pa.types.is_floating(kind):
            dtype = np.dtype(kind.to_pandas_dtype())
            view = np.frombuffer(arr.buffers()[1], dtype, len(arr), arr.offset * dtype.itemsize)
            view.flags.writeable = False  # Arrow's buffer is immutable (frombuffer would let it be written)
            return view
        if pa.types.is_boolean(kind):
            bits = np.frombuffer(arr.buffers()[1], np.uint8, (arr.offset + len(arr) + 7) // 8)
            return np.unpackbits(bits, bitorder="little")[arr.offset : arr.offset + len(arr)].view(np.bool_)
    return arr.to_numpy(zero_copy_only=False)
