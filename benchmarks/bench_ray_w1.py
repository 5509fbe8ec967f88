"""W1 (URL blocklist + length filter) on the Ray executor: 2 cores vs 1 core vs inline vs Ray Data.

The work: ``url_filter`` (``examples/blocklist.txt``) + ``text_length_filter`` (200..100,000 code points) on
``--rows`` CommonCrawl-like records (default 1,000,000 in 8 zstd Parquet files, ~2.5 KB of text each, generated
once under ``benchmarks/.data/``), reading ``id, url, text``, writing the kept rows as zstd Parquet (no rejected
output). Every system runs as its own subprocess, timed wall-clock from launch to exit, so interpreter start-up,
imports, starting Ray and its actors and shutting it down all count; rec/s = input rows / wall seconds.

* **ray 2 cores** - ``mdf run -q recipe.yaml`` with ``executor.type: ray`` (a local Ray started by the run), one
  stage ``clean`` of ``resources: {cpu: 1}``, tried with ``replicas`` 1 and ``{min: 1, max: 2}`` and
  ``batch_rows`` 8192 and 32768; the best configuration is the one compared.
* **ray 1 core** - the best configuration again under ``taskset -c 0``. Ray still detects 2 CPUs (it counts
  CPUs, not the affinity mask), so the plan is the same and only the hardware differs.
* **inline** - ``mdf run`` with ``executor.type: inline`` (the default executor: one process, ``workers: auto``,
  a shard per core at once, each read, filtered and written by its own threads), at both batch sizes, best
  compared: the Ray executor on one machine is measured against what a user gets without Ray.
* **Ray Data** - ``ray_bench/w1_ray_data.py``: ``read_parquet -> map_batches(batch_format="pyarrow") ->
  write_parquet(compression="zstd")`` where the mapped function runs the *same* mdf_text ``UrlFilter`` and
  ``TextLengthFilter`` objects (``Operator.process``), at both batch sizes, best compared. Ray Data needs pandas,
  which mdf does not: it is pip-installed once into ``benchmarks/.venv-raydata/site`` and put on PYTHONPATH for
  that subprocess only.

Each configuration runs ``--repeat`` times, round-robin (a busy machine then slows all alike); best run kept.
Kept-row counts must agree across every system (asserted). For the Ray runs the script also prints what
``metrics.json`` says: the run's own wall (``wall_s``, from before actor start to the last commit), the actors'
start-up (``startup_s``), each stage's utilisation and the peak number of chains in flight, so the gap between
whole-process and in-run throughput (Ray start-up and shutdown) is visible.

Where the time goes (2-core shared dev box, 1M records, Ray 2.60): ~4-6 s of every Ray run is outside the run
(interpreter and imports, ``ray.init`` of a local Ray, teardown and ``ray.shutdown``); inline pays none of it.
The recipe is one stage, so the executor's ``whole_shards: auto`` runs it in whole-shard mode: each replica reads
a shard, filters it and writes it in its own process, and no batch goes through the object store. ``--chains``
adds the same configurations with ``whole_shards: false`` (batch chains loader -> stage -> writer, each batch
put into the object store twice, ~2.5 GB each way): before the mode, those were the Ray executor's only runs,
with the stage busy ~40% of the run and the loaders (Parquet decode) and writers (zstd encode) pacing it.
In whole-shard mode a replica overlaps reading, filtering and writing with two threads of its own, as an inline
worker does. ``--joined`` adds the Ray configurations joined (``address:``) to a Ray this script starts once with
``ray start --head`` on 127.0.0.1 (2 CPUs, its own temp dir, its processes killed at the end, never ``ray
stop``): what a user with a running Ray pays, without a Ray start and stop in every run.

Run from the repository root with mdf's venv active (pandas from PyPI once, for Ray Data)::

    python benchmarks/bench_ray_w1.py                     # --rows 1000000 --files 8 --repeat 2
    python benchmarks/bench_ray_w1.py --rows 200000 --repeat 1 --skip-ray-data
    python benchmarks/bench_ray_w1.py --repeat 1 --batch-rows 32768 --skip-ray-data --chains   # both modes
    python benchmarks/bench_ray_w1.py --repeat 1 --batch-rows 32768 --skip-ray-data --joined   # a running Ray
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from ray_bench.data import cc_dataset, count_rows  # noqa: E402

BLOCKLIST = ROOT / "examples" / "blocklist.txt"
RD_SITE = HERE / ".venv-raydata" / "site"
RD_REQUIREMENTS = ["pandas>=2.2", "python-dateutil", "pytz", "tzdata", "fsspec", "six"]
TARGETS = {"ray 2 cores / ray 1 core": 1.6, "ray / inline": 0.9, "ray / Ray Data": 1.5, "ray joined / inline": 0.9}


@dataclass
class Config:
    name: str
    kind: str  # mdf | ray-data
    executor: str = "ray"
    batch_rows: int = 8192
    replicas: int = 1  # max replicas of the stage (min 1)
    whole_shards: bool | None = None  # None: the executor's default (auto: whole shards for this one-stage recipe)
    address: str | None = None  # a Ray started once by this script (--joined), else a local Ray per run
    taskset: str | None = None
    walls: list[float] = field(default_factory=list)
    kept: set[int] = field(default_factory=set)
    metrics: list[dict[str, Any]] = field(default_factory=list)

    @property
    def best(self) -> float:
        return min(self.walls)

    def best_metrics(self) -> dict[str, Any]:
        return self.metrics[self.walls.index(self.best)] if self.metrics else {}


def recipe(inp: Path, out: Path, c: Config) -> dict[str, Any]:
    return {
        "reader": {"type": "parquet", "paths": [str(inp / "*.parquet")], "columns": ["id", "url", "text"]},
        "stages": [
            {
                "name": "clean",
                "operators": [
                    {"url_filter": {"blocklist": str(BLOCKLIST)}},
                    {"text_length_filter": {"min_length": 200, "max_length": 100_000}},
                ],
                "replicas": {"min": 1, "max": c.replicas},
                "resources": {"cpu": 1},
            }
        ],
        "writer": {"type": "parquet", "path": str(out)},
        "executor": {"type": c.executor, "batch_rows": c.batch_rows}
        | ({} if c.whole_shards is None else {"whole_shards": c.whole_shards})
        | ({} if c.address is None else {"address": c.address}),
    }


def ray_data_pythonpath() -> str:
    if not (RD_SITE / "pandas").exists():
        print(f"installing pandas for Ray Data into {RD_SITE} (pip --target, not into mdf's venv) ...", flush=True)
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(RD_SITE)]
        subprocess.run([*pip, *RD_REQUIREMENTS], check=True)
    return os.pathsep.join([str(RD_SITE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)


def run_once(c: Config, inp: Path, tmp: Path) -> tuple[float, int, dict[str, Any]]:
    out = tmp / "out"
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    if c.kind == "mdf":
        path = tmp / "recipe.yaml"
        path.write_text(yaml.safe_dump(recipe(inp, out, c), sort_keys=False))
        cmd = [str(Path(sys.executable).with_name("mdf")), "run", "-q", str(path)]
    else:
        env["PYTHONPATH"] = ray_data_pythonpath()
        script = HERE / "ray_bench" / "w1_ray_data.py"
        cmd = [sys.executable, str(script), str(inp), str(out), str(BLOCKLIST), "--batch-size", str(c.batch_rows)]
    if c.taskset:
        cmd = ["taskset", "-c", c.taskset, *cmd]
    log = tmp / "log.txt"
    with log.open("wb") as f:
        start = time.perf_counter()
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env=env).returncode
        wall = time.perf_counter() - start
    if rc != 0:
        raise SystemExit(f"{c.name}: {' '.join(cmd)} exited {rc}:\n{log.read_text(errors='replace')[-3000:]}")
    metrics_path = out / "_mdf" / "metrics.json"
    metrics = json.loads(metrics_path.read_text()) if metrics_path.exists() else {}
    return wall, count_rows(out), metrics


def run_round(configs: list[Config], inp: Path, label: str) -> None:
    for c in configs:
        with tempfile.TemporaryDirectory(prefix="mdf-rw1-") as tmp:
            wall, kept, metrics = run_once(c, inp, Path(tmp))
        c.walls.append(wall)
        c.kept.add(kept)
        if metrics:
            c.metrics.append(metrics)
        extra = ""
        if metrics.get("executor") == "ray":
            extra = (
                f"  (in-run wall {metrics['wall_s']:.2f} s, actor start-up "
                f"{metrics.get('startup_s', float('nan')):.2f} s, replicas {metrics.get('replicas')})"
            )
        elif metrics:
            extra = f"  (in-run wall {metrics['wall_s']:.2f} s)"
        print(f"  {label}  {c.name:<50} {wall:7.2f} s  kept {kept:,}{extra}", flush=True)


def describe_ray(c: Config, rows: int) -> None:
    m = c.best_metrics()
    if not m:
        return
    stats = ", ".join(
        f"{s['name']} x{s['replicas']} busy {s['busy_s']:.2f} s util {s['utilisation']:.0%}" for s in m["stage_stats"]
    )
    print(
        f"  {c.name}: whole process {c.best:.2f} s = in-run {m['wall_s']:.2f} s (of which actor start-up "
        f"{m.get('startup_s', float('nan')):.2f} s) + {c.best - m['wall_s']:.2f} s outside the run (interpreter, "
        f"imports, ray.init, teardown, ray.shutdown); in-run {rows / m['wall_s']:,.0f} rec/s; {m['batches']} "
        f"batches, peak in flight {m['peak_in_flight']}/{m['max_in_flight']}; {stats}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--batch-rows", default="8192,32768", help="comma-separated batch sizes to try")
    ap.add_argument("--skip-ray-data", action="store_true")
    ap.add_argument("--chains", action="store_true", help="also run Ray with batch chains (whole_shards: false)")
    ap.add_argument("--joined", action="store_true",
                    help="also run the Ray configurations joined to a Ray this script starts once (`ray start --head`"
                    " on 127.0.0.1, 2 CPUs), as a user with a running Ray has it: no Ray start and stop per run")  # fmt: skip
    args = ap.parse_args()
    sizes = [int(x) for x in args.batch_rows.split(",")]

    inp = cc_dataset(args.rows, args.files)
    ray_cfgs = [
        Config(f"ray 2 cores, batch {b}, replicas {r}", "mdf", batch_rows=b, replicas=r) for b in sizes for r in (1, 2)
    ]
    if args.chains:
        ray_cfgs += [
            Config(f"ray 2 cores, chains, batch {b}, replicas {r}", "mdf", batch_rows=b, replicas=r, whole_shards=False)
            for b in sizes
            for r in (1, 2)
        ]
    head = RayHead() if args.joined else None
    if head is not None:
        ray_cfgs += [
            Config(
                c.name.replace("ray 2 cores", "ray joined"),
                "mdf",
                batch_rows=c.batch_rows,
                replicas=c.replicas,
                whole_shards=c.whole_shards,
                address=head.address,
            )
            for c in list(ray_cfgs)
        ]
    inline_cfgs = [Config(f"inline, batch {b}", "mdf", executor="inline", batch_rows=b) for b in sizes]
    rd_cfgs = [] if args.skip_ray_data else [Config(f"Ray Data, batch {b}", "ray-data", batch_rows=b) for b in sizes]
    print(f"W1 on {args.rows:,} records ({args.files} files in {inp}), {os.cpu_count()} cores, best of {args.repeat}\n")
    try:
        for i in range(args.repeat):
            run_round(ray_cfgs + inline_cfgs + rd_cfgs, inp, f"run {i + 1}/{args.repeat}")
    finally:
        if head is not None:
            head.stop()
    best_ray = min((c for c in ray_cfgs if c.address is None), key=lambda c: c.best)
    one_core = Config(
        best_ray.name.replace("2 cores", "1 core (taskset -c 0)"),
        "mdf",
        batch_rows=best_ray.batch_rows,
        replicas=best_ray.replicas,
        whole_shards=best_ray.whole_shards,
        taskset="0",
    )
    for i in range(args.repeat):
        run_round([one_core], inp, f"run {i + 1}/{args.repeat}")

    everyone = [*ray_cfgs, one_core, *inline_cfgs, *rd_cfgs]
    kept = set().union(*(c.kept for c in everyone))
    assert len(kept) == 1, {c.name: c.kept for c in everyone}

    print(f"\n{'configuration':<50} {'best s':>8} {'median s':>9} {'rec/s (best)':>13}")
    for c in everyone:
        print(f"{c.name:<50} {c.best:>8.2f} {statistics.median(c.walls):>9.2f} {args.rows / c.best:>13,.0f}")
    print(f"\nkept rows: {kept.pop():,} (equal for every system)")
    print("\nwhere the Ray runs' time goes (best run of each, from metrics.json):")
    for c in [*ray_cfgs, one_core]:
        describe_ray(c, args.rows)

    best_inline = min(inline_cfgs, key=lambda c: c.best)
    ratios = {
        "ray 2 cores / ray 1 core": one_core.best / best_ray.best,
        "ray / inline": best_inline.best / best_ray.best,
    }
    if head is not None:
        joined = min((c for c in ray_cfgs if c.address is not None), key=lambda c: c.best)
        ratios["ray joined / inline"] = best_inline.best / joined.best
        print(f"best joined configuration: {joined.name} ({args.rows / joined.best:,.0f} rec/s)")
    if rd_cfgs:
        best_rd = min(rd_cfgs, key=lambda c: c.best)
        ratios["ray / Ray Data"] = best_rd.best / best_ray.best
    print(f"\nbest Ray configuration: {best_ray.name} ({args.rows / best_ray.best:,.0f} rec/s)")
    print(f"compared with: {one_core.name}; {best_inline.name}" + (f"; {best_rd.name}" if rd_cfgs else ""))
    for name, ratio in ratios.items():
        verdict = "MET" if ratio >= TARGETS[name] else "MISSED"
        print(f"  {name:<26} {ratio:5.2f}x   target >= {TARGETS[name]}x: {verdict}")


class RayHead:
    """``ray start --head`` on 127.0.0.1 with 2 CPUs, its session in a temp dir of its own; :meth:`stop` ends this
    cluster's processes only (``ray stop`` would end every Ray of the machine, a test run's too)."""

    def __init__(self) -> None:
        import socket

        self.tmp = tempfile.mkdtemp(prefix="mdfrw1-", dir="/tmp")  # Ray's unix socket paths must stay short
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.address = f"127.0.0.1:{port}"
        self.env = {**os.environ, "RAY_TMPDIR": self.tmp, "RAY_USAGE_STATS_ENABLED": "0"}
        ray = Path(sys.executable).with_name("ray")
        cmd = [str(ray), "start", "--head", "--port", str(port), "--node-ip-address", "127.0.0.1", "--num-cpus", "2",
               "--include-dashboard", "false", "--disable-usage-stats"]  # fmt: skip
        subprocess.run(cmd, env=self.env, check=True, capture_output=True, timeout=180)

    def stop(self) -> None:
        """SIGKILL the processes whose command line names this session's temp dir, and their descendants (Ray's
        workers rename themselves ``ray::...``)."""
        import contextlib
        import signal

        parent: dict[int, int] = {}
        ours: set[int] = set()
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            with contextlib.suppress(OSError, IndexError, ValueError):
                parent[int(proc.name)] = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if self.tmp.encode() in (proc / "cmdline").read_bytes():
                    ours.add(int(proc.name))
        while grown := {pid for pid, ppid in parent.items() if ppid in ours and pid not in ours}:
            ours |= grown
        ours.discard(os.getpid())
        for pid in ours:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    main()
