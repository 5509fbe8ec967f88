"""A Ray run with deduplicators prints mdf's own lines only (issue 19).

Deduplicators hand their stage actors the key state. When that object carried the bucket actors' handles, Ray's
C++ core worker printed an error-level ``core_worker.cc ... has constructor arguments in the object store and
max_restarts > 0`` line on the driver's stderr on every such run, which reads like a failure. The key state now
travels as the buckets' names; this test runs the CLI as a user does and reads its stderr.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .ray_helpers import many_rows_parquet, text_recipe

pytest.importorskip("ray")
pytest.importorskip("mdf_text")
pytest.importorskip("mdf_dedup")

MDF = Path(sys.executable).with_name("mdf")


def test_ray_dedup_run_prints_no_ray_lines(tmp_path):
    glob = many_rows_parquet(tmp_path / "in", files=2, rows=1500)
    dedup = [{"exact_dedup": {"column": "text"}}, {"minhash_dedup": {"column": "text", "threshold": 0.7}}]
    recipe = text_recipe(tmp_path, {"type": "parquet", "paths": [glob]}, {"type": "ray"}, extra_ops=dedup)
    recipe["stages"][1]["replicas"] = {"min": 1, "max": 2}  # two actors handed the key state, max_restarts > 0
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(recipe))
    out = subprocess.run([str(MDF), "run", str(path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stderr.splitlines()
    ray_lines = [x for x in lines if "core_worker" in x or "WARNING" in x or x.startswith("[20") or "(raylet)" in x]
    assert not ray_lines, ray_lines
    assert "executor: ray" in out.stderr and "(balanced)" in out.stdout
