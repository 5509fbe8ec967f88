"""Exact dedup, Parquet -> Parquet: mdf ``exact_dedup`` vs a plain Python blake2b-set script vs DataTrove.

Input: ``mdf.demo_data.dedup_table`` - 200,000 CommonCrawl-like pages (~2.5 KB), 10 % exact copies and 10 %
near copies (which exact dedup keeps), 4 zstd files cached under ``benchmarks/.data/``. Every system keeps one
row per distinct text and writes the kept rows as zstd Parquet, as its own subprocess, timed wall-clock from
launch to exit (start-up and imports count); rec/s = input rows / wall seconds; best of ``--repeat`` runs,
round-robin. All must keep the same number of rows (asserted).

* **mdf** - ``mdf run -q recipe.yaml``: parquet reader, ``exact_dedup`` (xxh3-64 of the text, streaming mode,
  default ``state:`` settings), parquet writer; inline executor (``workers: auto``, and 1 worker to show what
  the threads buy), and Ray (a local Ray started by the run).
* **mdf floor** - the same run with ``noop_refiner`` in place of ``exact_dedup``: reading and writing the
  Parquet only, the least any mdf run of this data can cost; mdf's exact-dedup time is also shown against it.
* **Polars** - ``dedup/exact_polars.py``: ``scan_parquet -> unique(subset=text, keep="first",
  maintain_order=True) -> sink_parquet`` (zstd level 1, mdf's row-group size).
* **plain Python** - ``dedup/exact_plain.py``: pyarrow read per file, ``hashlib.blake2b`` per text into one
  Python set, filter, pyarrow write.
* **DataTrove** - ``dedup/exact_datatrove.py`` in ``benchmarks/.venv-datatrove`` (W1's, plus ``tokenizers``): its
  three-pipeline exact dedup (signatures, heap merge, filter + ParquetWriter) under ``LocalPipelineExecutor``
  with tasks = files, workers = 1 and 2.

Then ``dedup/exact_profile.py`` runs mdf inline once more in process with timers around read, hash, claim,
filter and write, and prints the busy seconds of each beside the wall time and the floors.

Run from the repository root with mdf's venv active:

    python benchmarks/bench_dedup_exact.py     # --rows 200000 --repeat 3 --skip-ray --skip-datatrove
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fixed_cost import fixed_cost_line
from dedup.common import DT_PYTHON, HERE, dedup_dataset, load_line, mdf_system, run_all, timed

TARGETS = {"Polars": 1.0, "plain Python": 4.0, "DataTrove": 10.0}  # mdf inline rec/s >= N x the peer's
FLOOR = "mdf noop_refiner (read+write floor)"


def datatrove_python() -> Path:
    """W1's DataTrove venv, plus what ``datatrove.pipeline.dedup`` imports (``dedup/requirements-datatrove.txt``)."""
    if not DT_PYTHON.exists():
        from bench_w1_text_filter import datatrove_python as make_venv

        make_venv()
    probe = [str(DT_PYTHON), "-c", "import datatrove.pipeline.dedup"]
    if subprocess.run(probe, capture_output=True, check=False).returncode:
        print("adding dedup/requirements-datatrove.txt to the DataTrove venv ...", flush=True)
        pip = [str(DT_PYTHON), "-m", "pip", "install", "-q", "-r", str(HERE / "requirements-datatrove.txt")]
        subprocess.run(pip, check=True)
    return DT_PYTHON


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3, help="runs per system; the fastest counts")
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--skip-datatrove", action="store_true")
    ap.add_argument("--skip-profile", action="store_true")
    args = ap.parse_args()

    files = dedup_dataset(args.rows, args.files, 0.10, 0.10, 0.03, seed=11)
    data_dir = os.path.dirname(files[0])
    if not args.skip_datatrove:
        datatrove_python()
    print(f"exact dedup on {args.rows:,} rows in {len(files)} files, {os.cpu_count()} CPUs, load {load_line()}")
    print(f"wall seconds per run, systems interleaved (the best of {args.repeat} counts):")

    def plain(tmp: Path):
        cmd = [sys.executable, str(HERE / "exact_plain.py"), *files, "--out", str(tmp / "out")]
        return timed(cmd, tmp / "log"), tmp / "out", {}

    def datatrove(workers: int):
        def run(tmp: Path):
            cmd = [str(DT_PYTHON), str(HERE / "exact_datatrove.py"), "--data", data_dir, "--work", str(tmp / "work")]
            cmd += ["--out", str(tmp / "out"), "--tasks", str(len(files)), "--workers", str(workers)]
            return timed(cmd, tmp / "log"), tmp / "out", {}

        return run

    op = {"exact_dedup": {"column": "text"}}
    systems = {"mdf exact_dedup (inline)": mdf_system(files, op, "inline")}
    systems["mdf exact_dedup (inline, 1 worker)"] = mdf_system(files, op, "inline", workers=1)

    def polars(tmp: Path):
        cmd = [sys.executable, str(HERE / "exact_polars.py"), *files, "--out", str(tmp / "out")]
        return timed(cmd, tmp / "log"), tmp / "out", {}

    systems["Polars unique (keep first)"] = polars
    if not args.skip_ray:
        systems["mdf exact_dedup (ray)"] = mdf_system(files, op, "ray")
    systems[FLOOR] = mdf_system(files, "noop_refiner", "inline")
    systems["plain Python blake2b set"] = plain
    if not args.skip_datatrove:
        for w in (1, 2):
            systems[f"DataTrove exact dedup, workers={w}"] = datatrove(w)
    mdf, *others = run_all(args.repeat, systems, strict=tuple(systems))

    print()
    print(f"{'system':<38} {'wall s':>7} {'rec/s':>8} {'kept':>8} {'mdf/peer':>8}   all runs (s)")
    for r in (mdf, *others):
        ratio = f"{r.wall_s / mdf.wall_s:7.2f}x" if r is not mdf else ""
        runs = " ".join(f"{w:.1f}" for w in r.runs)
        print(f"{r.system:<38} {r.wall_s:7.2f} {args.rows / r.wall_s:8,.0f} {len(r.kept):8,} {ratio:>8}   {runs}")
    for r in others:
        if r.system != FLOOR:
            assert len(r.kept) == len(mdf.kept), f"{r.system} kept {len(r.kept):,} rows, mdf {len(mdf.kept):,}"
    print(fixed_cost_line())  # beside the rates: a run's fixed cost, so it is never read as a per-record one
    print(f"kept rows equal for all dedups: {len(mdf.kept):,} of {args.rows:,}")
    floor = next(r for r in others if r.system == FLOOR)
    print(
        f"mdf exact_dedup / its read+write floor: {mdf.wall_s / floor.wall_s:.2f}x wall "
        f"({mdf.extra['executor_s'] / floor.extra['executor_s']:.2f}x in the executor: "
        f"{mdf.extra['executor_s']:.2f} s vs {floor.extra['executor_s']:.2f} s)"
    )

    if not args.skip_profile:
        print()
        print_profile(files)

    print()
    for prefix, factor in TARGETS.items():
        peers = [r for r in others if r.system.startswith(prefix)]
        if peers:
            fastest = min(peers, key=lambda r: r.wall_s)
            ratio = fastest.wall_s / mdf.wall_s
            print(
                f"target mdf >= {factor:g}x {fastest.system}: {ratio:.2f}x -> {'met' if ratio >= factor else 'NOT met'}"
            )
    print(f"load average (1, 5, 15 min) at the end: {load_line()}")


def print_profile(files: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="mdf-dedup-prof-") as tmp:
        cmd = [sys.executable, str(HERE / "exact_profile.py"), *files, "--out", tmp]
        timed(cmd, Path(tmp) / "log")
        prof = json.loads((Path(tmp) / "log").read_text().strip().splitlines()[-1])
    ex, noop = prof["exact"], prof["noop"]
    print("where mdf inline's time goes (one in-process run with timers; busy s per phase, summed over threads):")
    order = ["read", "hash", "claim", "glue", "filter", "write"]
    for name, r in (("exact_dedup", ex), ("noop_refiner", noop)):
        phases = "  ".join(f"{k} {r['busy'][k]:.2f}" for k in order if k in r["busy"])
        busy = sum(r["busy"].values())
        print(f"  {name:<13} executor {r['executor_s']:.2f} s | {phases} | busy sum {busy:.2f} s")
    print(
        f"  bare pyarrow read_table + write_table(zstd), same files, one thread of calls: {prof['pyarrow_floor_s']:.2f} s"
    )
    dedup_s = sum(ex["busy"].get(k, 0.0) for k in ("hash", "claim", "glue", "filter"))
    print(
        f"  exact_dedup executor / noop executor = {ex['executor_s'] / noop['executor_s']:.2f}x; "
        f"dedup work (hash+claim+glue+filter) {dedup_s:.2f} s = {dedup_s / ex['executor_s']:.0%} of the executor wall"
    )


if __name__ == "__main__":
    main()
