"""Sample rejected rows for the report: a few rows per drop reason, read back from the rejected output.

The rejected output can be large (every dropped row of a web crawl), so each reason is a filtered scan that
stops after ``per_reason`` rows (``Dataset.head`` reads fragments only until it has them), and every value is
cut to ``MAX_CHARS`` so one 1 MB HTML page cannot make the report heavy.
"""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from mdf.metrics import REASON

MAX_CHARS = 240
MAX_COLUMNS = 6


def _dataset(path: str, fmt: str | None) -> ds.Dataset | None:
    if not path or not os.path.isdir(path):
        return None
    files = sorted(
        os.path.join(root, f)
        for root, dirs, names in os.walk(path)
        for f in names
        if not f.startswith((".", "_")) and (f.endswith(".parquet") if fmt == "parquet" else ".jsonl" in f)
    )
    if not files:
        return None
    if fmt == "parquet":
        return ds.dataset(files, format="parquet")
    import pyarrow.json as pj

    # JSON lines (maybe compressed): small enough to read whole at report time only when not huge
    tables = [pj.read_json(f) for f in files[:8]]
    return ds.dataset(pa.concat_tables(tables, promote_options="default"))


def _cell(value: Any) -> str:
    if isinstance(value, bytes):
        return f"<{len(value):,} bytes>"
    text = "" if value is None else str(value)
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f"... ({len(text):,} chars)"


def rejected_samples(
    path: str | None, fmt: str | None, reasons: list[str], per_reason: int = 3
) -> dict[str, list[dict[str, str]]]:
    """``{reason: [row as {column: text}, ...]}`` for each of ``reasons`` found in the rejected output."""
    if not path or not reasons:
        return {}
    try:
        data = _dataset(path, fmt)
    except (OSError, pa.ArrowInvalid):
        return {}
    if data is None or REASON not in data.schema.names:
        return {}
    columns = [REASON, *[n for n in data.schema.names if n != REASON][: MAX_COLUMNS - 1]]
    out: dict[str, list[dict[str, str]]] = {}
    for reason in reasons:
        table = data.filter(pc.field(REASON) == reason).head(per_reason, columns=columns)
        if table.num_rows:
            out[reason] = [{k: _cell(v) for k, v in row.items()} for row in table.to_pylist()]
    return out
