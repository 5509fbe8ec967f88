"""What running on Slurm costs: CPU-seconds per row of W1 inline vs on a 2-node allocation vs as a job array, and
how soon Ray is ready on the allocation. Issue 51's targets: allocation <= 1.15x inline, array <= 1.05x, Ray
ready <= 15 s after the job starts.

Starts the test suite's real Slurm (tests/slurm_cluster.py: Debian's slurmctld/slurmd/munge, two one-core nodes
in namespaces of their own; root), writes W1-like data (``mdf.demo_data``, CommonCrawl-like records), then runs,
interleaved ``--repeat`` times:

* **inline**: ``mdf run -q`` on the login node; CPU = the process tree's user + sys (``RUSAGE_CHILDREN``);
* **allocation**: ``mdf slurm run --nodes 2``; CPU = everything the two nodes ran while the job ran (their
  cgroup-v1 ``cpuacct`` groups: slurmstepd, Ray's head and workers, the driver, exited processes included);
* **array** (``--modes inline,allocation,array``): ``mdf slurm run --array 2`` (two tasks, each an inline run of
  its slice of shards, + the finalize job); CPU the same way.

Prints per-row CPU of each, the ratios to inline, and the allocation's "Ray ready" time from its job log.
Run from the repository root, as root: ``python plugins/mdf-slurm/benchmarks/bench_slurm.py --rows 400000``.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests.ray_helpers import text_recipe  # noqa: E402
from tests.slurm_cluster import SlurmCluster, started  # noqa: E402


def recipe(folder: Path, data: Path, name: str, replicas: int) -> Path:
    """W1 (url filter, length filter; zstd Parquet out). ``replicas`` is the stages' most replicas on Ray (one per
    node of the allocation: with one, a single actor runs the whole recipe on one node while the other idles, at
    about the same CPU but ~1.7x the wall time at 4 M rows); the inline run ignores it and uses every core."""
    where = {"type": "parquet", "paths": [str(data / "*.parquet")]}
    r = text_recipe(folder / name, where, {"type": "inline"}, replicas=replicas)
    r["writer"]["compression"] = "zstd"
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(r))
    return path


def write_files(data: Path, rows: int, files: int) -> None:
    """W1's input, one file at a time (each its own seed of the demo data), so memory holds one file's rows: the
    demo generator builds its whole table in memory (~2 KB a row: 12 M rows at once were killed for memory on this
    24 GiB machine)."""
    from mdf.demo_data import DemoSpec, write_dataset

    per = -(-rows // files)
    for k in range(files):
        part = data / f"part-{k}"
        n = min(per, rows - k * per)
        write_dataset(str(part), DemoSpec(rows=n, files=1, seed=7 + k), row_group_rows=10_000)
        (part / "cc-00000.parquet").rename(data / f"cc-{k:05d}.parquet")
        part.rmdir()


def rows_of(folder: Path) -> int:
    return int(json.loads((folder / "out" / "_mdf" / "metrics.json").read_text())["rows_read"])


def inline(cluster: SlurmCluster, path: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = cluster.mdf("run", "-q", str(path))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert out.returncode == 0, out.stderr[-3000:]
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def on_slurm(cluster: SlurmCluster, path: Path, *mode: str) -> tuple[float, float | None]:
    """CPU-seconds the compute nodes spent on the run; the Ray-ready seconds its log states (allocation)."""
    before = cluster.cpu_s()
    assert before is not None, "needs a writable cgroup-v1 cpuacct (/sys/fs/cgroup/cpuacct)"
    folder = cluster.submit(str(path), *mode)
    run = cluster.wait_run(folder)
    after = cluster.cpu_s()
    assert after is not None
    cpu = sum(after[n.name] - before[n.name] for n in cluster.compute)
    ready = None
    if run["mode"] == "allocation":
        log = (folder / f"slurm-{run['jobs'][0]}.out").read_text()
        found = re.search(r"Ray ready at \S+ .*?, ([\d.]+) s after the job started", log)
        assert found, log[-3000:]
        ready = float(found.group(1))
    else:
        state = cluster.job_state(run["finalize"]).get("JobState")
        assert state == "COMPLETED", (state, [p.read_text()[-2000:] for p in (folder / "logs").glob("*.out")])
    return cpu, ready


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=400_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--modes", default="inline,allocation", help="comma-separated: inline, allocation, array")
    ap.add_argument("--replicas", type=int, default=2, help="the stages' most replicas on the allocation's Ray")
    args = ap.parse_args()
    modes = args.modes.split(",")
    assert "inline" in modes, "inline is the baseline the ratios are to"
    with started(nodes=2) as cluster:
        print(f"Slurm cluster up in {cluster.started_s:.1f} s (controller + 2 one-core nodes)", flush=True)
        data = cluster.shared / "w1"
        write_files(data, args.rows, args.files)
        cpu: dict[str, list[float]] = {name: [] for name in modes}
        ready: list[float] = []
        for i in range(args.repeat):
            for name in cpu:
                folder = cluster.shared / f"{name}-{i}"
                folder.mkdir()
                path = recipe(folder, data, name, args.replicas)
                began = time.monotonic()
                if name == "inline":
                    cpu[name].append(inline(cluster, path))
                else:
                    mode = ("--nodes", "2", "--ray-start-args", "--object-store-memory 300000000")
                    used, up = on_slurm(cluster, path, *(mode if name == "allocation" else ("--array", "2")))
                    cpu[name].append(used)
                    if up is not None:
                        ready.append(up)
                assert rows_of(folder / name) == args.rows
                for part in folder.rglob("*.parquet"):  # the rows are counted: 4 runs of 12 M rows fill a disk
                    part.unlink()
                print(f"  run {i + 1}/{args.repeat} {name:<11} cpu {cpu[name][-1]:7.2f} s  wall "
                      f"{time.monotonic() - began:6.1f} s", flush=True)  # fmt: skip
        base = statistics.median(cpu["inline"]) / args.rows
        print(f"\nW1, {args.rows:,} rows in {args.files} files; medians of {args.repeat} interleaved runs")
        for name, values in cpu.items():
            per_row = statistics.median(values) / args.rows
            print(f"  {name:<11} {per_row * 1e6:8.2f} CPU-us/row   {per_row / base:5.2f}x inline")
        if ready:
            print(f"  Ray ready on the allocation: {', '.join(f'{r:.1f}' for r in ready)} s after the job started")
        subprocess.run(["uptime"])


if __name__ == "__main__":
    main()
