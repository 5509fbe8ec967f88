"""The scale-out projection against a real two-raylet cluster: costs measured on one replica (pinned to the head
raylet) project the two-replica run within 30 %, in two forms that can each fail on any machine load.

Both raylets run on this machine with one CPU each, so "two nodes" are two CPUs: the projection counts every
process's CPU (stage replicas, loaders, writers, driver) against the cluster's CPUs.

The two checks (CPU-seconds per row, and rows/s at the CPUs the run could have had) are
:mod:`tests.projection_check`'s, shared with the network-namespace cluster's test.

The old test divided by the CPU the two-replica run *used* whenever the load exceeded the cores (nearly always on 2
cores), so measured throughput cancelled out: a run that left a core idle passed. Seen red: with ``project``'s CPU
bound doubled (``2 * cpus / cpu_s_per_row``) check 1 gave x2.19 and check 2 x0.46 (load 16). Check 2's idle term
was not seen to catch a non-scaling run: the machine had no idle CPU while this was written (load 11 to 16), and
with none idle it reduces to check 1's per-row costs. The one-replica runs are measured with the second core
kept busy (:class:`tests.projection_check.Neighbour`: without it, x1.06 and x1.16 in two runs; with it,
x0.90-1.08 in three).
"""

from __future__ import annotations

import json
import os

import pytest
import yaml

from .conftest import run_mdf
from .cpu_window import IdleSampler
from .projection_check import Neighbour, compare, one_and_two
from .test_ray_multinode import cluster  # noqa: F401  (the two-raylet fixture)

pytest.importorskip("ray")


def _run(tmp, name, recipe, env):
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(recipe))
    result = run_mdf("run", "-q", str(path), env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((tmp / name / "out" / "_mdf" / "metrics.json").read_text())


def test_two_node_run_within_30_percent_of_projection(tmp_path, cluster):  # noqa: F811
    address, env = cluster
    one, two = one_and_two(tmp_path, address, {"head_node": 1})
    core = max(os.sched_getaffinity(0))  # the one replica's run with a second core as busy as the two-replica run
    with Neighbour(one, tmp_path / "neighbour", core):
        measured_one = _run(tmp_path, "one", one, env)
    with IdleSampler() as idle:
        measured_two = _run(tmp_path, "two", two, env)
    again = yaml.safe_load(yaml.safe_dump(one).replace(str(tmp_path / "one"), str(tmp_path / "one_again")))
    with Neighbour(again, tmp_path / "neighbour", core):
        one_again = _run(tmp_path, "one_again", again, env)  # the baseline on both sides of the compared run

    # what the Ray executor recorded for the report: every row in the shard log and the timeline, per replica
    m = measured_two
    assert sum(v[0] for v in m["shard_log"]["shards"].values()) == m["rows_read"]
    assert sum(m["timeline"]["done"]) == pytest.approx(m["rows_read"], rel=1e-3)  # buckets rounded to 0.1 row
    assert all(sum(op["latency"]) == op["batches"] for s in m["stages"] for op in s["operators"])
    page = (tmp_path / "two" / "out" / "_mdf" / "report.html").read_text()
    assert "utilisation per replica" in page
    stats = {s["name"]: s for s in measured_two["stage_stats"]}
    assert all(len(s["replica_utilisation"]) == 2 for s in stats.values())
    assert len(stats["clean"]["nodes"]) == 2, "the two replicas did not land on two raylets"
    comparison = compare(measured_one, measured_two, idle, cpus=2, one_again=one_again)
    print(comparison)
    comparison.check(tolerance=0.3)
