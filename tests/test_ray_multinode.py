"""Two raylets on this machine; ``mdf run`` joins with ``executor.address``; a stage pinned to node 2."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import run_mdf
from .ray_helpers import assert_same_outputs, many_rows_parquet, text_recipe


@pytest.fixture(scope="module")
def cluster():
    env = {
        **os.environ,
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
    }
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("ray_node.py"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        address = proc.stdout.readline().strip()
        assert address, "the test cluster did not start"
        yield address, env
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_stage_pinned_to_second_raylet_gives_inline_output(tmp_path, cluster):
    address, env = cluster
    paths = many_rows_parquet(tmp_path / "in", files=3, rows=1500)
    reader = {"type": "parquet", "paths": [paths]}
    inline = text_recipe(tmp_path / "inline", reader, {"type": "inline", "batch_rows": 200})
    ray_r = text_recipe(tmp_path / "ray", reader, {"type": "ray", "batch_rows": 200, "address": address})
    ray_r["stages"][1]["resources"] = {"cpu": 0.5, "custom": {"second_node": 1}}
    ray_r["stages"][0]["resources"] = {"cpu": 0.5, "custom": {"head_node": 1}}
    for name, recipe in (("inline", inline), ("ray", ray_r)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(recipe))
        result = run_mdf("run", "-q", str(path), env=env)
        assert result.returncode == 0, result.stderr[-3000:]
    assert_same_outputs(tmp_path / "inline" / "out", tmp_path / "ray" / "out")
    metrics = json.loads((tmp_path / "ray" / "out" / "_mdf" / "metrics.json").read_text())
    nodes = {s["name"]: s["nodes"] for s in metrics["stage_stats"]}
    assert len(nodes["clean"]) == 1 and len(nodes["length"]) == 1
    assert nodes["clean"] != nodes["length"], "the pinned stages ran on the same raylet"
