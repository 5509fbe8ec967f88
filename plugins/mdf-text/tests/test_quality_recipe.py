"""examples/fineweb.yaml end to end through ``mdf run`` on generated CommonCrawl-like Parquet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mdf.testing import read_output

pytest.importorskip("mdf_kernels", reason="the quality filters run on mdf-kernels: pip install ./rust")
pytest.importorskip("mdf_dedup", reason="the recipe ends with minhash_dedup: pip install ./plugins/mdf-dedup")

ROOT = Path(__file__).resolve().parents[3]
RECIPE = ROOT / "examples" / "fineweb.yaml"


def test_fineweb_recipe_runs_on_generated_data(tmp_path: Path) -> None:
    from mdf.demo_data import DemoSpec, write_dataset

    write_dataset(str(tmp_path / "mdf-demo" / "data"), DemoSpec(rows=600, files=2))
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mdf.cli"]
    env = {**os.environ, "COLUMNS": "200"}
    res = subprocess.run(
        [*cmd, "run", str(RECIPE), "--set", "executor.type=inline"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    kept = read_output(tmp_path / "mdf-demo" / "fineweb-out")
    rejected = read_output(tmp_path / "mdf-demo" / "fineweb-rejected")
    metrics = json.loads((tmp_path / "mdf-demo" / "fineweb-out" / "_mdf" / "metrics.json").read_text())
    assert metrics["balanced"] and metrics["rows_read"] == 600
    n_kept = 0 if kept is None else kept.num_rows
    assert n_kept + rejected.num_rows == 600
    reasons = set(rejected.column("_reason").to_pylist())
    assert any(r.startswith("gopher_") for r in reasons)  # the generated text is word salad: Gopher drops some
    ops = {op["name"]: op for stage in metrics["stages"] for op in stage["operators"]}
    assert ops["c4_quality_filter"]["counters"]["line-total"] > 0
