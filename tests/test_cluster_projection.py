"""Issue 30: the report's scale-out projection, made from a run on one worker host, against the measured run on
two worker hosts of the network-namespace cluster (:mod:`tests.netns_cluster`), within 25 %.

Each worker host is one CPU pinned to a core of its own; the head (GCS, driver) is not pinned. The one-host run
pins its stage replica to ``w1`` by the host's custom resource ``node_w1``; the two-host run asks for two
replicas, which land one on each host (checked). :mod:`tests.projection_check` compares CPU-seconds per row
predicted vs spent, and rows/s at the CPUs the run could have had (its own CPU time plus what the machine left
idle). A pair (one-host run, two-host run) is taken up to three times until one is within 25 %, the one-host
costs from the least disturbed one-host run so far (load only adds CPU time per row): a loaded machine moves
single pairs out (at load 6 one pair gave x1.28 CPU-seconds and the next x0.80; in CI at load 6.6 a pair's
rows/s came out x0.72 with its CPU-seconds x1.06), while a wrong projection misses in every pair.

The one-host run is measured with w2's core kept busy by a :class:`tests.projection_check.Neighbour`: the
hosts here share one machine's caches and memory bandwidth, and in a review CI without it the two-host run
spent x1.26-1.57 the projected CPU in all three pairs. Unlike the loopback test (two raylets on 127.0.0.1),
the rows cross a real link between hosts through Ray's object transfer, so a per-row cost that a network hop
adds and the one-host run did not have shows up here.

Seen red: with :func:`mdf.projection.project`'s CPU bound doubled (``2 * cpus / cpu_s_per_row``) both checks
fail, in all three pairs. Run by the nox session ``cluster`` (root: network namespaces); skipped with the reason
elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest
import yaml

from .cpu_window import IdleSampler
from .netns_cluster import NetnsCluster, started, unavailable
from .projection_check import Neighbour, compare, one_and_two

pytest.importorskip("ray")
pytest.importorskip("mdf_text")
pytestmark = pytest.mark.skipif(unavailable() is not None, reason=f"netns cluster: {unavailable()}")
ATTEMPTS, TOLERANCE = 3, 0.25


@pytest.fixture(scope="module")
def cluster() -> Iterator[NetnsCluster]:
    with started(workers=2) as net:
        yield net


def _run(cluster: NetnsCluster, tmp: Path, recipe: dict) -> dict:
    path = tmp / "r.yaml"
    path.write_text(yaml.safe_dump(recipe))
    result = cluster.mdf("run", "-q", str(path))
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((tmp / "out" / "_mdf" / "metrics.json").read_text())


def _cpu_per_row(metrics: dict) -> float:
    from mdf.metrics import RunMetrics
    from mdf.projection import Measured

    return Measured.from_metrics(RunMetrics.from_dict(metrics)).cpu_s_per_row


def _placed(one: dict, two: dict) -> None:
    assert {n for s in one["stage_stats"] for n in s["nodes"]} == {s["nodes"][0] for s in one["stage_stats"]}, (
        "the one-host run's replica did not stay on one host"
    )
    assert all(len(s["nodes"]) == 2 for s in two["stage_stats"]), "the replicas did not land on two hosts"
    assert two["rows_read"] == one["rows_read"] == 160_000


def test_two_hosts_within_25_percent_of_the_projection_from_one(cluster: NetnsCluster, tmp_path: Path) -> None:
    one, two = one_and_two(tmp_path, cluster.address, {"node_w1": 1})
    other_core = next(n.core for n in cluster.nodes if n.name == "w2")
    runs: dict[str, list[dict]] = {"one": [], "two": []}
    seen: list[str] = []
    with IdleSampler() as idle:
        for i in range(ATTEMPTS):
            for name, recipe in (("one", one), ("two", two)):
                tmp = tmp_path / f"{name}-{i}"
                tmp.mkdir()
                recipe["writer"]["path"], recipe["rejected"]["path"] = str(tmp / "out"), str(tmp / "rejected")
                # the one-host run with w2's core kept as busy as the two-host run will keep it
                busy = Neighbour(recipe, tmp_path / f"neighbour-{i}", other_core) if name == "one" else nullcontext()
                with busy:
                    runs[name].append(_run(cluster, tmp, recipe))
            measured_one = min(runs["one"], key=_cpu_per_row)  # load only adds CPU time per row
            _placed(measured_one, runs["two"][-1])
            comparison = compare(measured_one, runs["two"][-1], idle, cpus=2)
            print(comparison)
            seen.append(str(comparison))
            if comparison.within(TOLERANCE):
                return
    pytest.fail(f"no pair of {ATTEMPTS} within +-{TOLERANCE:.0%} of the projection: " + " | ".join(seen))
