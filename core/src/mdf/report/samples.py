"""Sample rejected rows for the report: a few rows per drop reason, read back from the rejected output.

The rejected output can be large (every dropped row of a web crawl), so it is scanned batch by batch, keeping
only rows whose reason is wanted (``pyarrow.compute.is_in``), and the scan stops as soon as every reason has
``per_reason`` rows. Every value is cut to ``MAX_CHARS`` so one 1 MB HTML page cannot make the report heavy.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mdf.errors import MdfError
from mdf.metrics import REASON
from mdf.storage import is_remote

MAX_CHARS = 240
MAX_COLUMNS = 6


def _files(path: str, fmt: str | None) -> list[str]:
    """The rejected output's part files (``_``/``.``-prefixed names are metadata, not data); an ``s3://`` output's
    published parts by URL."""
    ext = ".parquet" if fmt == "parquet" else ".jsonl"
    if path and is_remote(path):
        return sorted(o.url for o in _storage().list(path) if ext in o.url.rsplit("/", 1)[-1])
    if not path or not os.path.isdir(path):
        return []
    return sorted(
        os.path.join(root, f)
        for root, _, names in os.walk(path)
        for f in names
        if not f.startswith((".", "_")) and ext in f
    )


def _batches(files: list[str], fmt: str | None, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    if fmt == "parquet":  # file by file (pyarrow.dataset would add ~0.1 s of import to every run's report)
        for f in files:  # an object on S3 is read by range: footer, then row group by row group
            yield from pq.ParquetFile(_storage().open_random(f) if is_remote(f) else f).iter_batches(
                batch_size=4096, columns=columns
            )
        return
    import pyarrow.json as pj

    for f in files:  # JSON Lines, maybe compressed: one file at a time, stopped by the caller when it has enough
        yield from pj.read_json(_storage().open_input(f) if is_remote(f) else f).to_batches()


def _cell(value: Any) -> str:
    if isinstance(value, bytes):
        return f"<{len(value):,} bytes>"
    text = "" if value is None else str(value)
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f"... ({len(text):,} chars)"


def rejected_samples(
    path: str | None, fmt: str | None, reasons: list[str], per_reason: int = 3
) -> dict[str, list[dict[str, str]]]:
    """``{reason: [row as {column: text}, ...]}`` for each of ``reasons`` found in the rejected output."""
    files = _files(path or "", fmt)
    if not files or not reasons:
        return {}
    wanted = set(reasons)
    out: dict[str, list[dict[str, str]]] = {}
    try:
        for batch in _batches(files, fmt):
            if REASON not in batch.schema.names:
                return {}
            mask = pc.is_in(batch.column(REASON), pa.array(sorted(wanted), pa.string()))
            columns = [REASON, *[n for n in batch.schema.names if n != REASON][: MAX_COLUMNS - 1]]
            for row in batch.filter(mask).select(columns).to_pylist():
                picked = out.setdefault(row[REASON], [])
                if len(picked) < per_reason:
                    picked.append({k: _cell(v) for k, v in row.items()})
                if len(picked) == per_reason:
                    wanted.discard(row[REASON])
            if not wanted:
                break
    except (OSError, pa.ArrowInvalid, MdfError):  # unreadable (or no credentials here): the report goes without
        return out
    return out


def _storage() -> Any:
    """The storage layer, imported for an ``s3://`` rejected output only: a local run's report needs none of it."""
    from mdf.storage import default

    return default()
