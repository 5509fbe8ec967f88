"""Scale-out on separate network hosts: one one-core worker node vs two, and one node vs inline on one core.

The cluster is the tests' harness (``tests/netns_cluster.py``: network namespaces on a bridge, a head with the
GCS and the driver, worker nodes of one CPU pinned to a core each with ``taskset``; needs root). The workload
is W1 plus exact dedup: ``url_filter`` (``examples/blocklist.txt``) -> ``text_length_filter`` -> ``exact_dedup``
on ``text``, over ``--rows`` CommonCrawl-like rows (the tests' generator) in Parquet, written as Parquet.

Printed, each the best of ``--repeat`` runs (whole ``mdf run`` process, wall, start-up included, and the run's
own ``metrics.wall_s``):

* ``two nodes / one node`` — the issue's target is >= 1.7x;
* ``one Ray node / inline on one core`` — the Ray executor's efficiency per node (``taskset -c 0 mdf run``
  with ``executor.workers=1``; the issue's target for Ray vs inline on one machine is >= 0.85x).

Run from the repository root, as root, with mdf's venv active::

    python benchmarks/bench_cluster_scaling.py --rows 200000 --repeat 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.netns_cluster import BIN, NetnsCluster, unavailable  # noqa: E402
from tests.ray_helpers import many_rows_parquet, text_recipe  # noqa: E402


def recipe(tmp: Path, data: str, executor: dict, replicas: int) -> Path:
    r = text_recipe(tmp, {"type": "parquet", "paths": [data]}, executor, [{"exact_dedup": {"column": "text"}}],
                    replicas=replicas)  # fmt: skip
    path = tmp / "r.yaml"
    path.write_text(yaml.safe_dump(r))
    return path


def timed(cmd: list[str], run: Callable[[list[str]], Any], out: Path) -> tuple[float, float]:
    """(process wall, the run's own wall_s) of one ``mdf run``."""
    start = time.perf_counter()
    result = run(cmd)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])}: exit {result.returncode}: {result.stderr[-2000:]}")
    return wall, json.loads((out / "_mdf" / "metrics.json").read_text())["wall_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--batch-rows", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    if why := unavailable():
        raise SystemExit(f"cannot build the cluster here: {why}")
    work = Path(tempfile.mkdtemp(prefix="mdf-bench-cluster-"))
    data = many_rows_parquet(work / "in", files=8, rows=args.rows // 8)
    results: dict[str, tuple[float, float]] = {}

    def best(name: str, make_cmd: Callable, run: Callable, replicas: int, executor: dict) -> None:
        for i in range(args.repeat):
            tmp = work / f"{name}-{i}"
            tmp.mkdir()
            path = recipe(tmp, data, {**executor, "batch_rows": args.batch_rows}, replicas)
            got = timed(make_cmd(path), run, tmp / "out")
            if name not in results or got[0] < results[name][0]:
                results[name] = got

    def local(cmd: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, capture_output=True, text=True)

    mdf = str(BIN / "mdf")
    best("inline, one core", lambda p: ["taskset", "-c", "0", mdf, "run", "-q", str(p), "--set",
                                        "executor.workers=1"], local, 1, {"type": "inline"})  # fmt: skip
    for workers in (1, 2):
        with _started(workers) as cluster:
            best(f"ray, {workers} node(s)", lambda p, c=cluster: ["run", "-q", str(p)],
                 lambda cmd, c=cluster: c.mdf(*cmd), workers, {"type": "ray", "address": cluster.address})  # fmt: skip
    for name, (wall, run_wall) in results.items():
        print(f"{name:18s} process {wall:7.2f} s   run {run_wall:7.2f} s   {args.rows / wall:10,.0f} rows/s")
    one, two, inline = results["ray, 1 node(s)"], results["ray, 2 node(s)"], results["inline, one core"]
    print(f"two nodes / one node: {one[0] / two[0]:.2f}x (process), {one[1] / two[1]:.2f}x (run)   target >= 1.7x")
    print(f"one Ray node / inline on one core: {inline[0] / one[0]:.2f}x (process), {inline[1] / one[1]:.2f}x (run)")


class _started:
    """A started :class:`NetnsCluster` as a context manager, closed on the way out."""

    def __init__(self, workers: int) -> None:
        self.cluster = NetnsCluster(workers=workers)

    def __enter__(self) -> NetnsCluster:
        return self.cluster.start()

    def __exit__(self, *exc: object) -> None:
        self.cluster.close()


if __name__ == "__main__":
    main()
