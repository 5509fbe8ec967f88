"""Test data and recipes shared by the dedup tests."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mdf.demo_data import dedup_table


def write_corpus(folder: Path, table: pa.Table, files: int = 3, row_group_rows: int = 200) -> str:
    """Split ``table`` over ``files`` Parquet files (several row groups each); return the glob."""
    folder.mkdir(parents=True, exist_ok=True)
    per = -(-table.num_rows // files)
    for k in range(files):
        pq.write_table(table.slice(k * per, per), folder / f"part-{k:03d}.parquet", row_group_size=row_group_rows)
    return str(folder / "*.parquet")


def recipe(tmp: Path, glob: str, op: dict, executor: dict, name: str = "run") -> dict:
    return {
        "reader": {"type": "parquet", "paths": [glob], "row_groups_per_shard": 2},
        "stages": [{"name": "dedup", "operators": [op]}],
        "writer": {"type": "parquet", "path": str(tmp / name / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / name / "rejected")},
        "executor": executor,
        "state": {"snapshot_every_s": 0},
    }


def exact_corpus(rows: int = 3000, seed: int = 3) -> pa.Table:
    return dedup_table(rows, exact_rate=0.25, near_rate=0.0, mean_words=60, seed=seed)
