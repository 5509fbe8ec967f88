"""Scale-out on separate network hosts: one one-core worker node vs two, and one node vs inline on one core.

The cluster is the tests' harness (``tests/netns_cluster.py``: network namespaces on a bridge, a head with the
GCS and the driver, worker nodes of one CPU pinned to a core each with ``taskset``; needs root). The workload
is W1 plus exact dedup: ``url_filter`` (``examples/blocklist.txt``) -> ``text_length_filter`` -> ``exact_dedup``
on ``text``, over ``--rows`` CommonCrawl-like rows (the tests' generator) in Parquet, written as Parquet.

Printed, each the best of ``--repeat`` runs (whole ``mdf run`` process, wall, start-up included, and the run's
own ``metrics.wall_s``):

* ``two nodes / one node`` — the issue's target is >= 1.7x;
* ``one Ray node / inline on one core`` — the Ray executor's efficiency per node (``taskset -c 0 mdf run``
  with ``executor.workers=1``; the issue's target for Ray vs inline on one machine is >= 0.85x);
* under each run, the CPU seconds its processes spent, by host and kind (SeaweedFS, the replicas, the key-state
  buckets, the driver, Ray's daemons), polled from ``/proc`` every 0.3 s (a process's last 0.3 s can be missed);
* with ``--kill``, ``w2 killed at half the shards / clean two-host run`` — on a fresh two-host cluster, every
  process of worker host w2 is killed once 4 of the 8 shards are committed: the run's wall against the clean
  two-host run (the issue's target is <= 1.5x) and its rows written and rejected against the clean run's.

Run from the repository root, as root, with mdf's venv active::

    python benchmarks/bench_cluster_scaling.py --rows 200000 --repeat 2 [--s3]

With ``--s3`` the input is uploaded to a SeaweedFS on the head (``s3://mdf-in/w1/``) and every run, inline
included, reads it there and writes ``s3://mdf-out/<run>/``: the worker hosts reach the bucket over the bridge.
The inline run is on the head too, pinned to core 0 (the one-core baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.netns_cluster import BIN, NetnsCluster, started, unavailable  # noqa: E402
from tests.ray_helpers import many_rows_parquet, text_recipe  # noqa: E402


def recipe(tmp: Path, data: str, executor: dict, replicas: int, out: str) -> Path:
    r = text_recipe(tmp, {"type": "parquet", "paths": [data]}, executor, [{"exact_dedup": {"column": "text"}}],
                    replicas=replicas)  # fmt: skip
    r["writer"]["path"], r["rejected"]["path"] = f"{out}/out", f"{out}/rejected"
    path = tmp / "r.yaml"
    path.write_text(yaml.safe_dump(r))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--batch-rows", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--max-in-flight", default="auto", help="the Ray executor's max_in_flight (batch chains alive)")
    ap.add_argument("--s3", action="store_true", help="input and output on a SeaweedFS on the head (s3://)")
    ap.add_argument("--whole-shards", choices=["auto", "true", "false"], default="auto",
                    help="the Ray executor's whole_shards (auto: each replica reads, runs and writes whole shards "
                    "here, unless --max-in-flight is given; false: batch chains)")  # fmt: skip
    ap.add_argument("--kill", action="store_true",
                    help="also: on a fresh two-host cluster, kill every process of worker host w2 once half the "
                    "shards are committed; wall and rows against the clean two-host run")  # fmt: skip
    args = ap.parse_args()
    if why := unavailable():
        raise SystemExit(f"cannot build the cluster here: {why}")
    work = Path(tempfile.mkdtemp(prefix="mdf-bench-cluster-"))
    local = many_rows_parquet(work / "in", files=8, rows=args.rows // 8)
    results: dict[str, tuple[float, float, list[float]]] = {}
    by_process: dict[str, Counter[tuple[str, str]]] = {}
    written: dict[str, tuple[int, int]] = {}
    mdf = str(BIN / "mdf")

    def best(cluster: NetnsCluster, name: str, data: str, pin: list[str], replicas: int, executor: dict,
             kill_at: int = 0) -> None:  # fmt: skip
        for i in range(1 if kill_at else args.repeat):
            tmp = work / f"{name.replace(' ', '-')}-{i}"
            tmp.mkdir()
            out = f"s3://mdf-out/{tmp.name}" if args.s3 else str(tmp)
            path = recipe(tmp, data, {**executor, "batch_rows": args.batch_rows}, replicas, out)
            before, start = core_busy(), time.perf_counter()
            with ProcessCpu() as cpu:
                proc = cluster.popen(*pin, mdf, "run", "-q", str(path), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)  # fmt: skip
                if kill_at:
                    kill_when_committed(cluster, proc, kill_at, tmp, args.s3)
                _, err = proc.communicate()
            wall = time.perf_counter() - start
            busy = [b - a for a, b in zip(before, core_busy(), strict=True)]
            if proc.returncode != 0:
                raise SystemExit(f"{name}: exit {proc.returncode}: {err[-2000:]}")
            if args.s3:
                cluster.s3_tool("get", f"{out}/out/_mdf", str(tmp / "out" / "_mdf"))
            metrics = json.loads((tmp / "out" / "_mdf" / "metrics.json").read_text())
            got = wall, metrics["wall_s"], busy
            written[name] = metrics["rows_written"], metrics["rows_rejected"]
            if name not in results or got[0] < results[name][0]:
                results[name] = got
                by_process[name] = cpu.spent()

    for workers in (1, 2, 0) if args.kill else (1, 2):
        with started(workers=workers or 2, s3=args.s3) as cluster:
            data = local
            if args.s3:
                cluster.s3_tool("mb", "mdf-in")
                cluster.s3_tool("mb", "mdf-out")
                cluster.s3_tool("put", str(work / "in"), "s3://mdf-in/w1")
                data = "s3://mdf-in/w1/*.parquet"
            if workers == 1:  # on the head, pinned to the core w1 has: inline's efficiency on one core
                best(cluster, "inline, one core", data, ["taskset", "-c", "0"], 1, {"type": "inline", "workers": 1})
            whole = {"auto": "auto", "true": True, "false": False}[args.whole_shards]
            ray = {"type": "ray", "address": cluster.address, "max_in_flight": _int_or_auto(args.max_in_flight),
                   "whole_shards": whole}  # fmt: skip
            if workers:
                best(cluster, f"ray, {workers} node(s)", data, [], workers, ray)
            else:  # a fresh cluster: the kill leaves it a host short
                best(cluster, "ray, w2 killed", data, [], 2, ray, kill_at=4)  # 8 shards: at half of them
    where = "s3 -> s3 (SeaweedFS on the head)" if args.s3 else "local files"
    print(f"W1 + exact dedup, {args.rows:,} rows, {where}, best of {args.repeat}, load {os.getloadavg()[0]:.1f}")
    for name, (wall, run_wall, busy) in results.items():
        cores = ", ".join(f"cpu{i} {b:.1f} s" for i, b in enumerate(busy))
        print(f"{name:18s} process {wall:7.2f} s   run {run_wall:7.2f} s   {args.rows / wall:10,.0f} rows/s   "
              f"busy: {cores} ({sum(busy) / wall:.2f} cores on average)")  # fmt: skip
        spent = by_process[name]
        print("    CPU-s by host and process: " + ", ".join(
            f"{host} {kind} {s:.1f}" for (host, kind), s in spent.most_common() if s >= 0.5
        ) + f" (all: {sum(spent.values()):.1f})")  # fmt: skip
    one, two, inline = results["ray, 1 node(s)"], results["ray, 2 node(s)"], results["inline, one core"]
    print(f"two nodes / one node: {one[0] / two[0]:.2f}x (process), {one[1] / two[1]:.2f}x (run)   target >= 1.7x")
    print(f"one Ray node / inline on one core: {inline[0] / one[0]:.2f}x (process), {inline[1] / one[1]:.2f}x (run)")
    if args.kill:
        killed = results["ray, w2 killed"]
        same = written["ray, w2 killed"] == written["ray, 2 node(s)"]
        print(f"w2 killed at half the shards / clean two-host run: wall {killed[0] / two[0]:.2f}x (process), "
              f"{killed[1] / two[1]:.2f}x (run), target <= 1.5x; rows written and rejected "
              f"{written['ray, w2 killed']} vs {written['ray, 2 node(s)']}: {'equal' if same else 'DIFFERENT'}")  # fmt: skip


def kill_when_committed(cluster: NetnsCluster, proc: subprocess.Popen, shards: int, tmp: Path, s3: bool) -> None:
    """Kill every process of worker host w2 once ``shards`` shards are committed (the run's manifest, in the
    output, or for an s3:// output in the driver's working folder on the head)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if s3:
            paths = list((cluster.head.tmp / "mdf-cache").glob("outputs/*/_mdf/state/manifest.json"))
        else:
            paths = [tmp / "out" / "_mdf" / "state" / "manifest.json"]
        if any(_committed(m) >= shards for m in paths):
            print(f"  killing w2 ({cluster.kill_node('w2')} processes) at {shards} committed shards", flush=True)
            return
        time.sleep(0.1)
    raise SystemExit("the run ended (or stalled) before the kill: give it more rows")


def _committed(manifest: Path) -> int:
    try:
        return len(json.loads(manifest.read_text())["completed"])
    except (OSError, ValueError, KeyError):
        return 0


def core_busy() -> list[float]:
    """Busy seconds of each core so far (``/proc/stat``: all but idle and iowait). The worker hosts are pinned to
    a core each, but the head (GCS, driver, SeaweedFS) is not: with one worker host it can have the other core to
    itself, so "one node" may use two cores; this shows how much."""
    tick = os.sysconf("SC_CLK_TCK")
    out = []
    for line in Path("/proc/stat").read_text().splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and name != "cpu":
            ticks = [int(f) for f in fields]
            out.append((sum(ticks[:8]) - ticks[3] - ticks[4]) / tick)
    return out


class ProcessCpu:
    """CPU seconds (user + system) of every process that runs while the block does, by network host and kind.

    Polled from ``/proc`` every 0.3 s: Ray's actors exit at the end of a run, so one reading at the end would
    miss them. The host is the process's network namespace (the cluster's, by ``/run/netns``)."""

    KINDS = ("weed", "ray::ShardRunner", "ray::StateBucket", "ray::", "mdf run", "raylet", "gcs_server")

    def __enter__(self) -> ProcessCpu:
        self.hosts = {os.stat(p).st_ino: p.name.rsplit("-", 1)[-1] for p in Path("/run/netns").glob("*")}
        self.first: dict[int, float] = {}
        self.last: dict[int, tuple[float, str, str]] = {}
        self._read()
        self.first = {pid: cpu for pid, (cpu, _, _) in self.last.items()}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self._read()

    def _poll(self) -> None:
        while not self.stop.wait(0.3):
            self._read()

    def _read(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                host = self.hosts.get(os.stat(d / "ns" / "net").st_ino, "root")
            except OSError:
                continue
            kind = next((k for k in self.KINDS if k in cmd), "other")
            self.last[int(d.name)] = ((int(fields[11]) + int(fields[12])) / tick, host, kind)

    def spent(self) -> Counter[tuple[str, str]]:
        out: Counter[tuple[str, str]] = Counter()
        for pid, (cpu, host, kind) in self.last.items():
            out[(host, kind.removeprefix("ray::") or "other actors")] += cpu - self.first.get(pid, 0.0)
        return out


def _int_or_auto(value: str) -> int | str:
    return value if value == "auto" else int(value)


if __name__ == "__main__":
    main()
