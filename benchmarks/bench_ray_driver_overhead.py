"""Ray executor driver overhead: batch chains per second on tiny batches that cost nothing to process.

What is measured: a recipe of three stages, each one ``noop_refiner`` (0.5 CPU each, one replica), on
``--rows`` rows of a single int64 column in 4 Parquet files, ``batch_rows=--batch-rows`` (default 20,000 rows
/ 10 = 2,000 batches). Every batch is one chain ``loader.next -> stage 1 -> stage 2 -> stage 3 -> writer.write``
(5 actor calls) plus the driver's bookkeeping, so chains/s is the executor's per-batch overhead ceiling.

* **mdf** - ``RayExecutor`` run in this process on a Ray this script started itself (``ray.init`` is not timed).
  The run's wall time (``metrics.wall_s``) includes starting the loader/stage/writer actors; this script times
  ``RayExecutor._start`` separately (by wrapping the bound method on the instance) and reports
  ``chains / (wall_s - start-up)`` = chains per second from the first submission to the last write.
* **raw Ray** - the same actor graph written directly against Ray (2 loaders, 3 stage actors, 2 writers, same
  in-flight bound, writers append the same 10-row batches to Parquet): the loader's ObjectRef goes straight
  into stage 1 (the driver never fetches a batch's metadata), and the driver only waits for writer results.
  This is the floor Ray itself sets on this machine for this graph, timed the same way (actors started first).

``--profile`` adds one more mdf run under ``cProfile`` (the driver process only; actors are other processes)
and prints the top functions by internal and cumulative time.

Run from the repository root with mdf's venv active::

    python benchmarks/bench_ray_driver_overhead.py              # --rows 20000 --batch-rows 10 --repeat 3
    python benchmarks/bench_ray_driver_overhead.py --profile

Where the time goes (2-core shared dev box, Ray 2.60): Ray itself runs ~1,900-2,000 pipelined calls/s on one
noop actor, and every chain is 5 actor calls, so the hand-written raw-Ray graph reaches only ~250-320 chains/s
and mdf ~230 (0.7-0.9x raw). The driver spends most of its wall time blocked in ``ray.wait`` (the actors, raylet
and GCS share the two cores with it); its own CPU is ~2.1-2.3 ms per chain (raw Ray: ~1.75 ms), mostly
``.remote()`` submission (~0.2 ms per call in ``_actor_method_call``) plus per-chain ``ray.get`` of the loader's
meta and the writer's result. That CPU alone caps the driver below ~500 chains/s on this machine, so 1,000
chains/s needs fewer actor calls per batch (fusing consecutive stages with equal resources into one actor call,
several tiny batches per call) and no meta round trip through the driver, not micro-optimising the loop.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ray_bench.inproc import run_ray_recipe

TARGET_CHAINS_PER_S = 1_000
FILES = 4


def make_input(folder: Path, rows: int) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    per = -(-rows // FILES)
    paths = []
    for k in range(FILES):
        lo, hi = k * per, min(rows, (k + 1) * per)
        path = folder / f"ints-{k:05d}.parquet"
        pq.write_table(pa.table({"x": pa.array(range(lo, hi), pa.int64())}), path, row_group_size=1000)
        paths.append(str(path))
    return paths


def recipe(inp: Path, out: Path, batch_rows: int, max_in_flight: int | str = "auto") -> dict[str, Any]:
    stage = {"operators": ["noop_refiner"], "resources": {"cpu": 0.5}}
    return {
        "reader": {"type": "parquet", "paths": [str(inp / "*.parquet")]},
        "stages": [{"name": f"noop{i}", **stage} for i in range(1, 4)],
        "writer": {"type": "parquet", "path": str(out)},
        "executor": {"type": "ray", "batch_rows": batch_rows, "max_in_flight": max_in_flight},
    }


def run_mdf(
    inp: Path,
    out: Path,
    batch_rows: int,
    profiler: cProfile.Profile | None = None,
    max_in_flight: int | str = "auto",
) -> dict[str, Any]:
    m = run_ray_recipe(recipe(inp, out, batch_rows, max_in_flight), profiler)
    assert m["kept"] == m["rows"], m
    m["chains_per_s"] = m["chains"] / m["steady_s"]
    m["driver_cpu_ms_per_chain"] = 1000 * m["driver_cpu_s"] / m["chains"]
    return m


class RawLoader:
    def __init__(self, paths: list[str], batch_rows: int) -> None:
        self._it = (b for p in paths for b in pq.ParquetFile(p).iter_batches(batch_size=batch_rows))

    def next(self) -> pa.RecordBatch:
        return next(self._it)


class RawStage:
    def process(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        return batch


class RawWriter:
    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.files: dict[int, pq.ParquetWriter] = {}

    def write(self, shard: int, batch: pa.RecordBatch) -> int:
        if shard not in self.files:
            self.files[shard] = pq.ParquetWriter(os.path.join(self.folder, f"part-{shard}.parquet"), batch.schema)
        self.files[shard].write_batch(batch)
        return batch.num_rows

    def close(self) -> None:
        for f in self.files.values():
            f.close()


def run_raw(paths: list[str], out: Path, batch_rows: int, max_in_flight: int) -> dict[str, Any]:
    """The same graph, hand-written: the driver only submits and waits for writer results (a known batch count)."""
    import ray

    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    n_loaders = 2
    owned = [paths[i::n_loaders] for i in range(n_loaders)]
    loaders = [ray.remote(RawLoader).options(num_cpus=0).remote(p, batch_rows) for p in owned]
    stages = [ray.remote(RawStage).options(num_cpus=0.5).remote() for _ in range(3)]
    writers = [ray.remote(RawWriter).options(num_cpus=0).remote(str(out)) for _ in range(n_loaders)]
    everyone = loaders + stages + writers
    ray.get([a.__ray_ready__.remote() for a in everyone])
    startup = time.perf_counter() - t0
    todo = []  # (loader index, shard) per batch, loaders taking turns like mdf's
    per_loader = [
        [
            (k, i)
            for i, p in enumerate(paths)
            if p in owned[k]
            for _ in range(-(-pq.read_metadata(p).num_rows // batch_rows))
        ]
        for k in range(n_loaders)
    ]
    while any(per_loader):
        for q in per_loader:
            if q:
                todo.append(q.pop(0))
    t1, cpu0 = time.perf_counter(), time.process_time()
    in_flight: list[Any] = []
    rows = 0
    for k, shard in todo:
        if len(in_flight) >= max_in_flight:
            ready, in_flight = ray.wait(in_flight, num_returns=1)
            rows += sum(ray.get(ready))
        ref = loaders[k].next.remote()
        for s in stages:
            ref = s.process.remote(ref)
        in_flight.append(writers[k].write.remote(shard, ref))
    rows += sum(ray.get(in_flight))
    ray.get([w.close.remote() for w in writers])
    steady = time.perf_counter() - t1
    cpu = time.process_time() - cpu0
    for a in everyone:
        ray.kill(a)
    deadline = time.monotonic() + 10  # Ray frees a killed actor's CPUs asynchronously; the next mdf run needs them
    while ray.available_resources().get("CPU", 0.0) < 2.0 - 1e-6 and time.monotonic() < deadline:
        time.sleep(0.05)
    return {
        "chains": len(todo),
        "rows": rows,
        "startup_s": startup,
        "steady_s": steady,
        "chains_per_s": len(todo) / steady,
        "driver_cpu_ms_per_chain": 1000 * cpu / len(todo),
    }


def actor_call_rate(calls: int) -> float:
    """Ray's own floor: ``calls`` pipelined calls on one noop actor, returning a 10-row batch (calls/s)."""
    import ray

    actor = ray.remote(RawStage).options(num_cpus=0).remote()
    batch = pa.record_batch({"x": pa.array(range(10), pa.int64())})
    ray.get(actor.process.remote(batch))
    t0 = time.perf_counter()
    ray.get([actor.process.remote(batch) for _ in range(calls)])
    rate = calls / (time.perf_counter() - t0)
    ray.kill(actor)
    return rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--batch-rows", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-in-flight", default="auto", help="executor.max_in_flight for mdf (the raw graph copies it)")
    ap.add_argument("--profile", action="store_true", help="one extra mdf run under cProfile (driver process)")
    args = ap.parse_args()

    import logging

    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with tempfile.TemporaryDirectory(prefix="mdf-drv-") as tmp_s:
        tmp = Path(tmp_s)
        paths = make_input(tmp / "in", args.rows)
        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, _temp_dir=str(tmp / "ray"))
        print(f"ray.init: {time.perf_counter() - t0:.2f} s (not counted)")
        print(
            f"{args.rows:,} rows, batch_rows={args.batch_rows} -> {-(-args.rows // args.batch_rows):,} chains; "
            f"3 noop stages (0.5 CPU each), {FILES} shards, {os.cpu_count()} cores\n",
            flush=True,
        )
        rates = [actor_call_rate(2000) for _ in range(2)]
        print(
            f"Ray floor: {max(rates):,.0f} calls/s on one noop actor (2,000 pipelined calls, best of 2); a chain is "
            f"5 actor calls\n",
            flush=True,
        )
        mdf_runs, raw_runs = [], []
        for i in range(args.repeat):
            mif = args.max_in_flight if args.max_in_flight == "auto" else int(args.max_in_flight)
            m = run_mdf(tmp / "in", tmp / f"out-mdf-{i}", args.batch_rows, max_in_flight=mif)
            mdf_runs.append(m)
            print(
                f"  run {i + 1}/{args.repeat}  mdf      start-up {m['startup_s']:5.2f} s  "
                f"steady {m['steady_s']:6.2f} s  {m['chains_per_s']:7.0f} chains/s  "
                f"driver CPU {m['driver_cpu_ms_per_chain']:.2f} ms/chain  (wall_s incl. start-up {m['wall_s']:.2f} s, "
                f"peak in flight {m['peak_in_flight']}/{m['max_in_flight']})",
                flush=True,
            )
            r = run_raw(paths, tmp / f"out-raw-{i}", args.batch_rows, m["max_in_flight"])
            assert r["rows"] == args.rows, r
            raw_runs.append(r)
            print(
                f"  run {i + 1}/{args.repeat}  raw Ray  start-up {r['startup_s']:5.2f} s  "
                f"steady {r['steady_s']:6.2f} s  {r['chains_per_s']:7.0f} chains/s  "
                f"driver CPU {r['driver_cpu_ms_per_chain']:.2f} ms/chain",
                flush=True,
            )
        best_m = max(mdf_runs, key=lambda x: x["chains_per_s"])
        best_r = max(raw_runs, key=lambda x: x["chains_per_s"])
        print("\nstage utilisation (best mdf run, over wall_s incl. start-up):")
        for s in best_m["stage_stats"]:
            print(f"  {s['name']:<6} busy {s['busy_s']:6.3f} s  utilisation {s['utilisation']:.1%}")
        med_m = statistics.median(x["chains_per_s"] for x in mdf_runs)
        med_r = statistics.median(x["chains_per_s"] for x in raw_runs)
        print(f"\n{'system':<10} {'best chains/s':>14} {'median':>10}")
        print(f"{'mdf':<10} {best_m['chains_per_s']:>14,.0f} {med_m:>10,.0f}")
        print(f"{'raw Ray':<10} {best_r['chains_per_s']:>14,.0f} {med_r:>10,.0f}")
        ratio = best_m["chains_per_s"] / best_r["chains_per_s"]
        print(f"\nmdf / raw Ray (best of each): {ratio:.2f}x  (median: {med_m / med_r:.2f}x)")
        ok = best_m["chains_per_s"] >= TARGET_CHAINS_PER_S
        print(
            f"target mdf >= {TARGET_CHAINS_PER_S:,} chains/s: {'MET' if ok else 'MISSED'} "
            f"({best_m['chains_per_s']:,.0f})"
        )

        if args.profile:
            prof = cProfile.Profile()
            m = run_mdf(tmp / "in", tmp / "out-prof", args.batch_rows, profiler=prof)
            print(f"\ncProfile of the driver (one run; {m['chains_per_s']:,.0f} chains/s under the profiler):")
            for key in ("tottime", "cumulative"):
                buf = io.StringIO()
                pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(key).print_stats(22)
                text = buf.getvalue()
                print(text[text.index("   ncalls") :] if "   ncalls" in text else text)
        ray.shutdown()
    sys.exit(0)


if __name__ == "__main__":
    main()
