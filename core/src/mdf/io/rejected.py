"""One schema for every part file of a ``rejected:`` folder, so dataset readers read every rejected row whole.

Rejected rows come in several shapes: a reader's (``_raw``, ``_reason``, ``_shard``), an operator's (the
input's columns and those refiners added, plus ``_reason``), a decoder's (with ``_reason_detail``). Written as
they come, each part file had its own columns, and ``pq.read_table(rejected/)``, which takes the schema of one
file, returned only that file's columns: a JSONL run's rejected rows lost their own columns.

Before any data the run fixes the folder's schema (:func:`rejected_schema`): the input's columns as the reader
sees them (all nullable), the columns refiners declare they write, then ``_reason``, ``_reason_detail``,
``_raw`` and ``_shard``. It is saved as ``_mdf/rejected_schema.arrow`` in the folder, where the part-file
writer finds it in whichever process it runs, and every batch is cast to it (:func:`conform`). A row with a
column the schema lacks, or a value that does not cast to the column's type, loses nothing: the whole row goes
to ``_raw`` as JSON (where ``_raw`` is empty), beside the columns that do fit.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from mdf import layout
from mdf.io.base import RESERVED
from mdf.metrics import REASON

FILE = "rejected_schema.arrow"
_TYPES = {
    "string": pa.string(),
    "path": pa.string(),
    "integer": pa.int64(),
    "float": pa.float64(),
    "number": pa.float64(),
    "bool": pa.bool_(),
    "binary": pa.binary(),
}


def rejected_schema(input_schema: pa.Schema | None, written: dict[str, str]) -> pa.Schema | None:
    """The folder schema: ``input_schema``'s fields (nullable), the refiners' declared columns ``written``
    (``{column: family}``, kept where the family names one Arrow type), then mdf's own columns. ``None`` when
    the reader cannot tell its schema: rejected rows are then written as they come."""
    if input_schema is None:
        return None
    fields = [f.with_nullable(True) for f in input_schema if f.name not in RESERVED]
    names = {f.name for f in fields}
    for column, family in written.items():
        if column not in names and column not in RESERVED and family in _TYPES:
            fields.append(pa.field(column, _TYPES[family]))
            names.add(column)
    return pa.schema([*fields, *(pa.field(n, pa.string()) for n in RESERVED)])


def save(folder: str, schema: pa.Schema | None) -> None:
    """Write (or, with no schema, remove) ``<folder>/_mdf/rejected_schema.arrow``."""
    path = layout.meta_dir(folder) / FILE
    if schema is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(schema.serialize().to_pybytes())
    os.replace(tmp, path)


def load(folder: str) -> pa.Schema | None:
    """The folder's schema if a run fixed one (see :func:`save`)."""
    path = layout.meta_dir(folder) / FILE
    if not path.exists():
        return None
    return pa.ipc.read_schema(pa.py_buffer(path.read_bytes()))


def conform(batch: pa.RecordBatch, schema: pa.Schema, shard_id: str) -> pa.RecordBatch:
    """``batch`` with exactly ``schema``'s columns: missing ones null, ``_shard`` filled with ``shard_id``, and
    each row that has a column outside the schema or a value that does not cast kept whole in ``_raw``."""
    n = batch.num_rows
    arrays, lossy = [], False
    for field in schema:
        i = batch.schema.get_field_index(field.name)
        if i < 0:
            arrays.append(pa.nulls(n, field.type))
            continue
        column = batch.column(i)
        try:
            arrays.append(column if column.type == field.type else column.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            arrays.append(pa.nulls(n, field.type))
            lossy = True
    lossy = lossy or any(name not in schema.names for name in batch.schema.names)
    out = pa.RecordBatch.from_arrays(arrays, schema=schema)
    shard = out.schema.get_field_index("_shard")
    out = out.set_column(shard, "_shard", _fill(out.column(shard), shard_id))
    if lossy:
        raw = out.schema.get_field_index("_raw")
        out = out.set_column(raw, "_raw", _raw_rows(batch, out.column(raw)))
    return out


def _fill(column: pa.Array, value: str) -> pa.Array:
    if column.null_count == 0:
        return column
    return pc.fill_null(column, pa.scalar(value, column.type))


def _raw_rows(batch: pa.RecordBatch, raw: pa.Array) -> pa.Array:
    """``raw``, and where it is null the row of ``batch`` as JSON (without ``_reason``: it has its column)."""
    keep = [i for i, name in enumerate(batch.schema.names) if name != REASON]
    rows = batch.select(keep).to_pylist()  # only for the rare batch that does not fit the folder schema
    have = raw.to_pylist()
    out = [
        r if r is not None else json.dumps(row, ensure_ascii=False, default=_json)
        for r, row in zip(have, rows, strict=True)
    ]
    return pa.array(out, pa.string())


def _json(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)
