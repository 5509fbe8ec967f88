"""A corpus split in two crawls, A then B, and the runs the index tests compare."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from dedup_helpers import recipe, write_corpus

from mdf.resolve import parse_recipe
from mdf.run import run_recipe
from mdf.testing import read_output


def split(tmp: Path, table: pa.Table, files: int = 2) -> dict[str, str]:
    """Globs of halves A and B, and of both (A's files sort first, so one run sees A before B)."""
    half = table.num_rows // 2
    a, b = table.slice(0, half), table.slice(half)
    for folder, part in (("a", a), ("b", b)):
        write_corpus(tmp / folder, part, files=files)
    both = tmp / "ab"
    both.mkdir()
    for folder in ("a", "b"):
        for f in sorted((tmp / folder).glob("*.parquet")):
            (both / f"{folder}-{f.name}").symlink_to(f)
    return {"a": str(tmp / "a" / "*.parquet"), "b": str(tmp / "b" / "*.parquet"), "ab": str(both / "*.parquet")}


def run(
    tmp: Path, glob: str, op: dict[str, Any], name: str, executor: dict | None = None, buckets: int = 1
) -> tuple[Any, Any, Any]:
    """Kept rows, rejected rows, metrics of one run."""
    r = recipe(tmp, glob, op, executor or {"type": "inline"}, name)
    r["state"]["num_buckets"] = buckets
    metrics = run_recipe(parse_recipe(r))
    return read_output(r["writer"]["path"]), read_output(r["rejected"]["path"]), metrics


def ids(table: pa.Table | None) -> set[str]:
    return set() if table is None else set(table.column("id").to_pylist())
