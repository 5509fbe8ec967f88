"""Issue 30: mdf on a Ray cluster whose nodes are separate network hosts (:mod:`tests.netns_cluster`).

A head (GCS only, ``--num-cpus 0``) with the driver, and two one-CPU worker nodes pinned to a core each, in
network namespaces on a bridge; the recipe names the head by the address ``ray start`` printed, with token
authentication on. Input and output are on the file system the namespaces share, read and written by the Ray
actors on the worker hosts (the same with the data on S3: tests/test_cluster_s3.py).

What is checked, against an inline run of the same recipe on the same data:
* both worker hosts did work (the stage replicas sit on two different nodes) and the part files are equal,
  exact dedup included (its key state lives in a bucket actor on one of the hosts);
* a worker host lost mid-run (every process killed at once), or cut off (its link set down): where the host held
  no key-state bucket the run completes (its whole-shard replicas' shards run again on the other host) with the
  clean run's rows; where it held one (the run log says where each bucket is) the run stops in one line naming
  the lost bucket, and ``--resume`` completes it with exactly those rows.

Run by the nox session ``cluster`` (root: network namespaces); skipped with the reason elsewhere.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from .netns_cluster import BIN, NetnsCluster, started, unavailable
from .ray_helpers import assert_same_outputs, many_rows_parquet, text_recipe
from .reliability import error_lines

pytest.importorskip("ray")
pytest.importorskip("mdf_text")
pytest.importorskip("mdf_dedup")
pytestmark = pytest.mark.skipif(unavailable() is not None, reason=f"netns cluster: {unavailable()}")

DEDUP = [{"exact_dedup": {"column": "text", "mode": "cluster"}}]  # keeps the same copy on any executor


@pytest.fixture(scope="module")
def cluster() -> Iterator[NetnsCluster]:
    with started(workers=2) as net:
        yield net


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("netns-in")
    many_rows_parquet(folder, files=6, rows=3000)
    return folder


def _recipe(tmp: Path, data: Path, executor: dict, extra_ops: list | None = None, batch_rows: int = 500) -> Path:
    recipe = text_recipe(tmp, {"type": "parquet", "paths": [str(data / "*.parquet")]}, executor,
                         extra_ops=[*DEDUP, *(extra_ops or [])], replicas=2)  # fmt: skip
    recipe["executor"]["batch_rows"] = batch_rows
    path = tmp / "r.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


@pytest.fixture(scope="module")
def inline(tmp_path_factory, data) -> Path:
    """The same recipe on the inline executor, for comparison."""
    tmp = tmp_path_factory.mktemp("netns-inline")
    out = subprocess.run([str(BIN / "mdf"), "run", "-q", str(_recipe(tmp, data, {"type": "inline"}))],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return tmp


def _rows(tmp: Path) -> int:
    return pq.read_table(tmp / "out").num_rows + pq.read_table(tmp / "rejected").num_rows


def test_a_recipe_on_two_worker_hosts_equals_the_inline_run(cluster, data, inline, tmp_path):
    """Joined by the printed address with token authentication on; both hosts ran replicas; same part files."""
    out = cluster.mdf("run", str(_recipe(tmp_path, data, {"type": "ray", "address": cluster.address})))
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"executor: ray (cluster at {cluster.address})" in out.stderr
    assert_same_outputs(tmp_path / "out", inline / "out")
    assert_same_outputs(tmp_path / "rejected", inline / "rejected")
    metrics = json.loads((tmp_path / "out" / "_mdf" / "metrics.json").read_text())
    nodes = {n for stage in metrics["stage_stats"] for n in stage["nodes"]}
    assert len(nodes) == 2, metrics["stage_stats"]  # one replica on each worker host


def _completed(out: Path) -> int:
    try:
        return len(json.loads((out / "_mdf" / "state" / "manifest.json").read_text())["completed"])
    except (OSError, ValueError, KeyError):
        return 0


@pytest.mark.parametrize("fault", ["killed", "cut_off"])
def test_a_worker_host_lost_mid_run_loses_no_row(data, inline, tmp_path, fault):
    """Kill every process of worker host w2 (or set its link down) once the run has committed a shard (its
    checkpoint written per shard: with the default 30 s between key-state snapshots the first checkpoint came at
    the run's end, and the fault hit a finished run, seen here). What must
    happen depends on where the key state's bucket is (Ray places the zero-CPU actor; the run log names its node):
    elsewhere, the run completes with the clean rows; on w2, it stops in one line naming the lost bucket and
    --resume completes it with exactly those rows. A cluster of its own: the fault leaves it a host short."""
    with contextlib.closing(NetnsCluster(workers=2).start()) as cluster:
        _lose_a_host(cluster, data, inline, tmp_path, fault)


def _lose_a_host(cluster: NetnsCluster, data: Path, inline: Path, tmp_path: Path, fault: str) -> None:
    slow = [{"delay_refiner": {"seconds_per_batch": 0.4}}]
    recipe = _recipe(tmp_path, data, {"type": "ray", "address": cluster.address}, extra_ops=slow)
    spec = yaml.safe_load(recipe.read_text())
    spec["state"] = {"snapshot_every_s": 0}  # a checkpoint per committed shard: the fault comes mid-run
    recipe.write_text(yaml.safe_dump(spec))
    proc = cluster.popen(str(BIN / "mdf"), "run", "-q", str(recipe), stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while _completed(tmp_path / "out") < 1 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        done = _completed(tmp_path / "out")
        assert proc.poll() is None and done < 6, f"the run ended before the fault ({done} of 6 shards): make it longer"
        if fault == "killed":
            assert cluster.kill_node("w2") > 0
        else:
            cluster.cut_link("w2")
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    log = (tmp_path / "out" / "_mdf" / "run.log").read_text()
    lost = f"on the node at {cluster.node('w2').address}\n" in log  # the bucket was on the lost host
    print(f"\n{fault}: exit {proc.returncode}; bucket on w2: {lost}; {error_lines(err)}")
    if lost:
        assert proc.returncode == 1 and len(error_lines(err)) == 1 and "Traceback" not in err, err[-3000:]
        assert "key-state bucket 0" in err and "--resume" in err, err[-3000:]
        again = cluster.mdf("run", "-q", "--resume", str(recipe))
        assert again.returncode == 0, again.stderr[-3000:]
    else:
        assert proc.returncode == 0, err[-3000:]
    assert_same_outputs(tmp_path / "out", inline / "out")
    assert_same_outputs(tmp_path / "rejected", inline / "rejected")
    assert _rows(tmp_path) == 18000
