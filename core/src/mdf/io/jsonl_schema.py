"""JSONL column types from the recipe or from a sample across the file, never from the first record.

Arrow's JSON reader types a column by the first value it meets, so one ``"text": 42`` at the top of a file
made every later (string) text a type mismatch. The reader now parses every block against one schema per
file: the types the recipe gives (``columns: {text: string, n: int64}``), else the majority type of each
field over a sample of lines taken across the file (:func:`mdf.io.streams.sample_lines`). A record whose value
does not fit is rejected alone as ``reader:type_mismatch``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pyarrow as pa

from mdf.io.jsonl_values import MAX_DEPTH, bad_value, depth

_SCALARS = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.string()}
TYPE_NAMES = "string, int64, float64, bool, binary, date32, timestamp[ms], large_string, ..."


def parse_type(name: str) -> pa.DataType:
    """An Arrow type from its name (``string``, ``int64``, ``timestamp[ms]``): what ``columns:`` may give."""
    try:
        return pa.type_for_alias(name)
    except (ValueError, KeyError):
        raise ValueError(f"unknown type {name!r}; use one of {TYPE_NAMES}") from None


def infer_schema(lines: list[bytes]) -> pa.Schema:
    """Each field's majority type over the JSON objects among ``lines`` (ints and floats together: float64).

    Fields only ever null, or whose nested values disagree, are left out: Arrow infers those per block."""
    votes: dict[str, Counter[type]] = {}
    nested: dict[str, list[Any]] = {}
    for line in lines:
        if line.count(b"[") + line.count(b"{") > MAX_DEPTH and depth(line) > MAX_DEPTH:
            continue  # rejected when read (json.loads would recurse, Arrow crash)
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if not isinstance(record, dict) or bad_value(line.decode("utf-8", "replace"), record) is not None:
            continue  # rejected when read; a lone surrogate in a key cannot even name a field
        for key, value in record.items():
            counter = votes.setdefault(key, Counter())
            if value is None:
                continue
            kind = type(value)
            counter[kind] += 1
            if kind in (list, dict):
                nested.setdefault(key, []).append(value)
    fields = []
    for key, counter in votes.items():
        if not counter:
            continue
        if set(counter) == {int, float}:
            fields.append(pa.field(key, pa.float64()))
            continue
        kind = counter.most_common(1)[0][0]
        if kind in _SCALARS:
            fields.append(pa.field(key, _SCALARS[kind]))
            continue
        try:
            fields.append(pa.field(key, pa.array([v for v in nested.get(key, []) if type(v) is kind]).type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError, OverflowError):
            continue
    return pa.schema(fields)


def extend(schema: pa.Schema | None, seen: pa.Schema) -> pa.Schema:
    """``schema`` plus the typed (non-null) fields a parsed block brought that it lacks."""
    if schema is None:
        return pa.schema([f for f in seen if not pa.types.is_null(f.type)])
    new = [f for f in seen if f.name not in schema.names and not pa.types.is_null(f.type)]
    return pa.schema([*schema, *new]) if new else schema
