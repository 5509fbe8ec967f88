"""Shared pieces of the no-data-loss suite (issue 13): recipes, the CLI in process, and output readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from mdf import DAMAGED_INPUT


def write_recipe(
    tmp: Path,
    paths: list[str],
    reader: str = "jsonl",
    executor: str = "inline",
    ops: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> Path:
    recipe = {
        "reader": {"type": reader, "paths": paths},
        "stages": [
            {
                "name": "clean",
                "operators": ops
                or [{"url_filter": {"domains": ["site3.example"]}}, {"text_length_filter": {"min_length": 40}}],
            }
        ],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / "rej")},
        "executor": {"type": executor, "batch_rows": 512},
        **extra,
    }
    path = tmp / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``mdf ARGS`` in this process: (exit code, stdout, stderr)."""
    from mdf.cli import main

    code = 0
    try:
        main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def table(folder: Path) -> pa.Table:
    """The folder read the way any dataset reader would (``_mdf/`` is skipped by its ``_`` prefix)."""
    return pq.read_table(folder)


def metrics(out: Path) -> dict[str, Any]:
    return json.loads((out / "_mdf" / "metrics.json").read_text())


def damaged_rows(rejected: pa.Table) -> list[dict[str, Any]]:
    reasons = rejected.column("_reason").to_pylist()
    raws = rejected.column("_raw").to_pylist() if "_raw" in rejected.column_names else [None] * len(reasons)
    return [json.loads(raw) for reason, raw in zip(reasons, raws, strict=True) if reason == DAMAGED_INPUT]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every data file of a folder and its bytes (``_mdf/`` excluded: the lock file is rewritten by a claim)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not str(p.relative_to(folder)).startswith("_mdf")
    }
