"""Exactly-once dedup under failures: a stage actor killed mid-run, a whole run killed and resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.compute as pc
import pytest
import ray
import yaml
from dedup_helpers import exact_corpus, recipe, write_corpus

from mdf.resolve import parse_recipe
from mdf.run import run_recipe
from mdf.testing import read_output

pytestmark = pytest.mark.usefixtures("local_ray")  # mdf.testing: one Ray for the in-process Ray runs

SLOW = {"delay_refiner": {"seconds_per_batch": 0.03}}


def one_row_per_group(table, kept) -> None:
    groups = pc.unique(table.column("group")).to_pylist()
    assert sorted(kept.column("group").to_pylist()) == sorted(groups), "a group lost or kept twice"


def test_killed_stage_actor_loses_no_key_and_keeps_none_twice(tmp_path):
    table = exact_corpus(rows=3000, seed=7)
    glob = write_corpus(tmp_path / "in", table, files=2)
    r = recipe(tmp_path, glob, {"exact_dedup": {}}, {"type": "ray", "batch_rows": 150})
    # keys claimed, then the actor sleeps: the kill lands after the claims and before the batch returns
    r["stages"][0]["operators"].append({"delay_refiner": {"seconds_per_batch": 0.25}})
    r["state"]["num_buckets"] = 2
    killed: list[float] = []

    def killer() -> None:
        deadline = time.time() + 60
        while time.time() < deadline and not killed:
            if not ray.is_initialized():  # the run starts Ray; asking before would start another one
                time.sleep(0.05)
                continue
            names = [a for a in ray.util.list_named_actors() if a.endswith("-dedup-0")]
            if names:
                handle = ray.get_actor(names[0])
                if ray.get(handle.stats.remote())["batches"] >= 3:  # it has claimed keys before
                    time.sleep(0.1)  # ... and is now inside a batch: claimed, sleeping, not yet returned
                    ray.kill(handle, no_restart=False)
                    killed.append(time.time())
                    return
            time.sleep(0.05)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    m = run_recipe(parse_recipe(r))
    finished = time.time()
    thread.join()
    assert killed and killed[0] < finished - 0.3, "the stage actor was not killed mid-run"
    kept = read_output(tmp_path / "run" / "out")
    one_row_per_group(table, kept)
    assert m.balanced and m.rows_read == table.num_rows


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_run_killed_midway_then_resumed_keeps_one_row_per_group(tmp_path, executor):
    table = exact_corpus(rows=4000, seed=8)
    glob = write_corpus(tmp_path / "in", table, files=4, row_group_rows=100)
    r = recipe(tmp_path, glob, {"exact_dedup": {}}, {"type": executor, "batch_rows": 50})
    r["stages"][0]["operators"].insert(0, SLOW)
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(r))
    manifest = tmp_path / "run" / "out" / "_mdf" / "state" / "manifest.json"
    env = {**os.environ, "COLUMNS": "200"}
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe) if exe.exists() else "mdf", "run", str(path), "-q"]
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stderr=subprocess.PIPE, text=True)
    try:
        completed = _wait_for_completed_shards(manifest, proc, at_least=3)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and everything it started (a local Ray too)
        proc.wait()
    total_shards = 20  # 4 files x 10 row groups / 2 per shard
    assert 3 <= completed < total_shards, f"kill came too late to test anything ({completed} shards done)"
    resumed = subprocess.run([*cmd, "--resume"], env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    metrics = json.loads((tmp_path / "run" / "out" / "_mdf" / "metrics.json").read_text())
    assert metrics["resumed"]["skipped_shards"] >= 3
    # metrics.json covers the whole run, restored shards included (it covered only the resumed ones)
    assert metrics["rows_read"] == table.num_rows and metrics["balanced"]
    assert metrics["rows_written"] == read_output(tmp_path / "run" / "out").num_rows
    one_row_per_group(table, read_output(tmp_path / "run" / "out"))


def _wait_for_completed_shards(manifest: Path, proc: subprocess.Popen, at_least: int) -> int:
    deadline = time.time() + 120
    while time.time() < deadline:
        assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read()[-2000:]}"
        if manifest.exists():
            try:
                done = len(json.loads(manifest.read_text())["completed"])
            except (json.JSONDecodeError, KeyError):
                done = 0
            if done >= at_least:
                return done
        time.sleep(0.02)
    raise AssertionError("no shard completed within 120 s")
