"""W1-like data and its text recipe as YAML files, shared by the tests that compare a way of running a recipe
(slices, Slurm allocation and array modes) with one plain inline run of it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import yaml

from .ray_helpers import assert_same_outputs, text_recipe


def write_w1(folder: Path, rows: int, files: int, row_group_rows: int) -> Path:
    """The demo generator's W1-like Parquet files (text with URLs, lengths and duplicates of the real mix)."""
    from mdf.demo_data import DemoSpec, write_dataset

    write_dataset(str(folder), DemoSpec(rows=rows, files=files), row_group_rows=row_group_rows)
    return folder


def w1_recipe(tmp: Path, data: Path, batch_rows: int, extra_ops: list | None = None, replicas: int = 1) -> Path:
    """``tmp/w1.yaml``: URL blocklist + length (+ ``extra_ops``), inline, writing ``tmp/out`` and
    ``tmp/rejected``."""
    reader = {"type": "parquet", "paths": [str(data / "*.parquet")]}
    recipe = text_recipe(tmp, reader, {"type": "inline", "batch_rows": batch_rows}, extra_ops, replicas)
    path = tmp / "w1.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


def inline_reference(
    tmp: Path, recipe: Callable[[Path], Path], mdf: Callable[..., subprocess.CompletedProcess]
) -> Path:
    """``tmp`` after one plain ``mdf run -q`` of ``recipe(tmp)`` through ``mdf`` (here, or on a cluster's login
    host): the rows every other way of running it must give."""
    out = mdf("run", "-q", str(recipe(tmp)))
    assert out.returncode == 0, out.stderr[-3000:]
    return tmp


def metrics(folder: Path) -> dict:
    return json.loads((folder / "_mdf" / "metrics.json").read_text())


def assert_same_counts(got: dict, want: dict) -> None:
    for key in ("rows_read", "rows_written", "rows_rejected"):
        assert got[key] == want[key], key
    assert got["balanced"]


def assert_same_run(got: Path, want: Path) -> None:
    """``got`` and ``want`` (each holding ``out`` and ``rejected``): the same part files with the same rows, kept
    and rejected, and the same counts, per operator too (a test's extra ``delay_refiner`` aside)."""
    assert_same_outputs(got / "out", want / "out")
    assert_same_outputs(got / "rejected", want / "rejected")
    a, b = metrics(got / "out"), metrics(want / "out")
    assert_same_counts(a, b)
    for key in ("batches", "shards", "reader_reasons"):
        assert a[key] == b[key], key
    ops = [[(o["name"], o["rows_in"], o["rows_out"]) for o in s["operators"]] for s in a["stages"]]
    ops = [[o for o in stage if o[0] != "delay_refiner"] for stage in ops]
    assert ops == [[(o["name"], o["rows_in"], o["rows_out"]) for o in s["operators"]] for s in b["stages"]]
