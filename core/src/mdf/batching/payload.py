"""What a row really weighs, computed from Arrow buffers, not guessed.

The seed estimates a text row as ``characters x 2`` bytes and a media row from fixed per-file guesses; here a
row's payload is the sum of its value buffers: string/binary lengths read from the offsets, fixed widths for
primitives, children summed for lists and structs. A column an operator declares it reads as ``path`` (it
loads the file each value names) adds the size of those files, since that is what the operator will hold.
Everything here is vectorised with ``pyarrow.compute`` and numpy except the ``stat`` of referenced files,
which runs on the sample only.

What kind of data a row is (its modality) is not decided here: the reader and the operators declare it
(:func:`mdf.batching.planner.declared_modality`). Bytes cannot say it: a binary column of JPEGs that no
operator decodes costs its bytes, and the same column decoded by an image operator costs several times more.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mdf.arrowpy import as_numpy
from mdf.metrics import REASON

IGNORED_COLUMNS = (REASON, "_raw")  # reader bookkeeping, not payload


@dataclass
class MediaFiles:
    """Files named by the sample's path columns: how many were sized, not found, or remote (not sized)."""

    found: int = 0
    missing: int = 0
    remote: int = 0
    examples_missing: list[str] = field(default_factory=list)


def row_payload_bytes(data: pa.Table | pa.RecordBatch) -> np.ndarray:
    """Bytes of each row's values across all columns (validity bits aside), as float64."""
    total = np.zeros(data.num_rows, dtype=np.float64)
    for name, column in zip(data.schema.names, data.columns, strict=True):
        if name not in IGNORED_COLUMNS:
            total += column_row_bytes(column)
    return total


def column_row_bytes(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per-row bytes of one column (chunks concatenated)."""
    if isinstance(column, pa.ChunkedArray):
        parts = [_array_row_bytes(c) for c in column.chunks]
        return np.concatenate(parts) if parts else np.zeros(0)
    return _array_row_bytes(column)


def _array_row_bytes(arr: pa.Array) -> np.ndarray:
    t = arr.type
    n = len(arr)
    if isinstance(t, pa.BaseExtensionType):
        return _array_row_bytes(arr.storage)
    if pa.types.is_dictionary(t):
        values = _array_row_bytes(arr.dictionary)
        idx = as_numpy(pc.fill_null(arr.indices, 0))
        picked = values[idx] if len(values) else np.zeros(n)
        return picked * _valid(arr) + t.index_type.bit_width / 8
    if _is_binary_like(t):
        lengths = as_numpy(pc.fill_null(pc.binary_length(arr), 0)).astype(np.float64)
        return lengths + _offset_width(t)
    if pa.types.is_fixed_size_binary(t):
        return np.full(n, float(t.byte_width))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        child = _array_row_bytes(pc.list_flatten(arr))
        parents = as_numpy(pc.list_parent_indices(arr))
        offsets = 0.0 if pa.types.is_fixed_size_list(t) else _offset_width(t)
        return np.bincount(parents, weights=child, minlength=n).astype(np.float64) + offsets
    if pa.types.is_struct(t):
        total = np.zeros(n)
        for child in arr.flatten():
            total += _array_row_bytes(child)
        return total
    if pa.types.is_null(t):
        return np.zeros(n)
    try:
        return np.full(n, t.bit_width / 8)
    except ValueError:  # maps, unions, views of nested types: an even share of the array's buffers
        return np.full(n, arr.nbytes / n if n else 0.0)


def _is_binary_like(t: pa.DataType) -> bool:
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_string_view(t)
        or pa.types.is_binary_view(t)
    )


def _offset_width(t: pa.DataType) -> float:
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        return 16.0  # a view header per value
    return 8.0 if (pa.types.is_large_string(t) or pa.types.is_large_binary(t) or pa.types.is_large_list(t)) else 4.0


def _valid(arr: pa.Array) -> np.ndarray:
    return as_numpy(pc.is_valid(arr)).astype(np.float64)


def row_text_chars(data: pa.Table | pa.RecordBatch) -> np.ndarray:
    """Characters per row across string columns: the input of the seed's ``chars x 2`` estimate."""
    total = np.zeros(data.num_rows, dtype=np.float64)
    for name, column in zip(data.schema.names, data.columns, strict=True):
        t = column.type
        if name not in IGNORED_COLUMNS and (pa.types.is_string(t) or pa.types.is_large_string(t)):
            total += as_numpy(pc.fill_null(pc.utf8_length(column), 0))
    return total


def referenced_file_bytes(
    data: pa.Table | pa.RecordBatch, columns: list[str], base_dirs: list[str], files: MediaFiles
) -> np.ndarray:
    """Per row, the size of the local files its ``columns`` name (0 where none); counts into ``files``.

    ``columns`` are those an operator declares it reads as ``path``; other strings are never taken for paths
    (an image folder's ``path`` column beside the image bytes is not loaded twice). A relative path is tried
    against the working directory, then each of ``base_dirs`` (the folder of the file it came from). URLs
    cannot be sized without fetching them and are only counted as remote.
    """
    total = np.zeros(data.num_rows, dtype=np.float64)
    for name in columns:
        if name not in data.schema.names:
            continue
        values, parents = _flat_strings(data.column(name))
        if values is None:
            continue
        sizes = np.zeros(len(values))
        for i, text in enumerate(values.to_pylist()):  # the sample only: at most 10,000 rows
            if text:
                sizes[i] = _file_size(text, base_dirs, files)
        total += np.bincount(parents, weights=sizes, minlength=data.num_rows)
    return total


def _flat_strings(column: pa.Array | pa.ChunkedArray) -> tuple[pa.Array | None, np.ndarray]:
    """String values of a string or list-of-string column, with the row each came from."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    t = arr.type
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        if not (pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)):
            return None, np.zeros(0, dtype=np.int64)
        return pc.list_flatten(arr), as_numpy(pc.list_parent_indices(arr))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr, np.arange(len(arr))
    return None, np.zeros(0, dtype=np.int64)


def _file_size(text: str, base_dirs: list[str], files: MediaFiles) -> float:
    if "://" in text and not text.startswith("file://"):
        files.remote += 1
        return 0.0
    path = text.removeprefix("file://")
    for candidate in [path, *(os.path.join(d, path) for d in base_dirs if not os.path.isabs(path))]:
        try:
            size = os.stat(candidate).st_size
        except OSError:
            continue
        files.found += 1
        return float(size)
    files.missing += 1
    if len(files.examples_missing) < 3:
        files.examples_missing.append(path)
    return 0.0
