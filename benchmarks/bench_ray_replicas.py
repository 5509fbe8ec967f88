"""Stage replicas on the Ray executor: a slow stage with 1 replica vs 2, same pipeline, same data.

The pipeline: stage ``fast`` = ``url_filter`` (``examples/blocklist.txt``; 0.5 CPU, 1 replica) then stage
``slow`` = ``delay_refiner`` sleeping ``--seconds-per-row`` per row (default 5e-5 s, i.e. 0.2 s per 4,096-row
batch; 0.5 CPU per replica), on ``--rows`` CommonCrawl-like records (default 200,000 in 4 files, reading
``id, url, text``; generated once under ``benchmarks/.data/``), writing the kept rows as zstd Parquet.
``delay_refiner`` sleeps, so it needs no CPU: the comparison shows the executor keeping two replicas of the
bottleneck stage busy at once (least-loaded dispatch, enough chains in flight), which is what a slow model stage
(GPU, remote API) needs; it does not measure CPU scaling (``bench_ray_w1.py`` does).

Both configurations run in this process on one Ray started by the script (``ray.init`` not timed), alternating,
``--repeat`` times each, best kept. Reported per configuration: the run's wall (``metrics.wall_s``, actors'
start-up included), the steady time from the first chain submitted to the last commit (start-up timed apart,
see ``ray_bench/inproc.py``), rows/s over the steady time, and each stage's utilisation from ``metrics.json``'s
``stage_stats``. The ideal ratio is the slow stage's batches over the larger replica's share
(``n / ceil(n / 2)``), before the fast stage, loaders and writers take their own part of the wall.

Where the time goes: with 1 replica the steady time is the slow stage's total sleep (10.0 s at the defaults,
measured ~10.1 s: the fast stage, loaders and writers overlap with it); with 2 replicas ~5.5 s against an ideal
5.0 s, the rest being the pipeline's fill and drain and the fast stage's work. Actor start-up (2-3.5 s here,
longer with more actors) is excluded from the steady ratio and included in the wall ratio, which is lower.

Run from the repository root with mdf's venv active::

    python benchmarks/bench_ray_replicas.py           # --rows 200000 --batch-rows 4096 --seconds-per-row 5e-5
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from ray_bench.data import cc_dataset  # noqa: E402
from ray_bench.inproc import run_ray_recipe  # noqa: E402

BLOCKLIST = ROOT / "examples" / "blocklist.txt"
TARGET_RATIO = 1.8


def recipe(inp: Path, out: Path, replicas: int, batch_rows: int, seconds_per_row: float) -> dict[str, Any]:
    return {
        "reader": {"type": "parquet", "paths": [str(inp / "*.parquet")], "columns": ["id", "url", "text"]},
        "stages": [
            {
                "name": "fast",
                "operators": [{"url_filter": {"blocklist": str(BLOCKLIST)}}],
                "resources": {"cpu": 0.5},
            },
            {
                "name": "slow",
                "operators": [{"delay_refiner": {"seconds_per_row": seconds_per_row}}],
                "replicas": {"min": 1, "max": replicas},
                "resources": {"cpu": 0.5},
            },
        ],
        "writer": {"type": "parquet", "path": str(out)},
        "executor": {"type": "ray", "batch_rows": batch_rows},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--batch-rows", type=int, default=4096)
    ap.add_argument("--seconds-per-row", type=float, default=5e-5)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()

    import ray

    inp = cc_dataset(args.rows, args.files)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with tempfile.TemporaryDirectory(prefix="mdf-rep-") as tmp_s:
        tmp = Path(tmp_s)
        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, _temp_dir=str(tmp / "ray"))
        print(f"ray.init: {time.perf_counter() - t0:.2f} s (not counted)")
        print(
            f"{args.rows:,} records, batch_rows={args.batch_rows}, slow stage sleeps {args.seconds_per_row:g} s/row "
            f"({args.seconds_per_row * args.batch_rows:.3f} s per full batch, "
            f"{args.seconds_per_row * args.rows:.1f} s in all), {os.cpu_count()} cores\n",
            flush=True,
        )
        runs: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
        for i in range(args.repeat):
            for n in (1, 2):
                m = run_ray_recipe(recipe(inp, tmp / f"out-{n}-{i}", n, args.batch_rows, args.seconds_per_row))
                assert m["replicas"][1] == n, f"asked for {n} replicas of 'slow', got {m['replicas']}"
                runs[n].append(m)
                util = ", ".join(f"{s['name']} x{s['replicas']} {s['utilisation']:.0%}" for s in m["stage_stats"])
                print(
                    f"  run {i + 1}/{args.repeat}  slow x{n}  wall {m['wall_s']:6.2f} s "
                    f"(start-up {m['startup_s']:.2f} s)  steady {m['steady_s']:6.2f} s  "
                    f"{m['rows'] / m['steady_s']:8,.0f} rows/s  "
                    f"peak in flight {m['peak_in_flight']}/{m['max_in_flight']}  utilisation: {util}",
                    flush=True,
                )
        kept = {m["kept"] for ms in runs.values() for m in ms}
        assert len(kept) == 1, kept
        best = {n: min(ms, key=lambda m: m["steady_s"]) for n, ms in runs.items()}
        batches = best[1]["chains"]
        ideal = batches / math.ceil(batches / 2)
        print(f"\n{'slow replicas':<14} {'best steady s':>14} {'rows/s':>10} {'wall s (incl. start-up)':>24}")
        for n, m in best.items():
            print(f"{n:<14} {m['steady_s']:>14.2f} {m['rows'] / m['steady_s']:>10,.0f} {m['wall_s']:>24.2f}")
        ratio = best[1]["steady_s"] / best[2]["steady_s"]
        wall_ratio = best[1]["wall_s"] / best[2]["wall_s"]
        print(f"\nkept rows: {kept.pop():,} (equal for both)")
        print(f"2 replicas / 1 replica, steady throughput: {ratio:.2f}x   (ideal for {batches} batches: {ideal:.2f}x)")
        print(f"2 replicas / 1 replica, wall incl. actor start-up: {wall_ratio:.2f}x")
        print(f"target >= {TARGET_RATIO}x (steady): {'MET' if ratio >= TARGET_RATIO else 'MISSED'}")
        ray.shutdown()


if __name__ == "__main__":
    main()
