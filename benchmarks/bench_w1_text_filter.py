"""W1: URL blocklist + length filter, Parquet -> Parquet, mdf against the tools users would otherwise use.

The work: drop rows whose URL host or any parent domain is in ``examples/blocklist.txt`` (unparsable URLs
dropped), keep texts of 200..100,000 code points (null text dropped), write the kept rows as zstd Parquet. The
input is 200,000 CommonCrawl-like records (``mdf.demo_data``, ~2.5 KB of text each, 4 files), generated once
and cached under ``benchmarks/.data/``.

Each system runs as its own subprocess on the same files and is timed wall-clock from launch to exit, so
interpreter start-up, imports and planning count; rec/s = input rows / wall seconds. Best of ``--repeat`` runs.

* **mdf** - ``mdf run -q recipe.yaml`` with the inline executor (one process, ``workers: auto``: a shard per
  core at once, each read, filtered and written by its own threads), ``url_filter`` + ``text_length_filter``, no ``rejected:`` output (no peer writes one).
* **mdf, 1 worker** - the same with ``workers: 1`` (one shard at a time), to show what the threads buy.
* **Polars** - ``w1/polars_pipeline.py`` (``pip install -r dedup/requirements-peers.txt``): ``scan_parquet ->
  filter -> sink_parquet`` (zstd level 1, mdf's row-group size), the same filter as Polars expressions.
* **plain Python** - ``w1/plain_python.py``: pyarrow reads each file, a Python loop over the rows
  (``urlsplit(url).hostname``, parent domains against a set, ``len(text)``), pyarrow writes the kept rows. Run
  with 1 process and with a 2-process ``multiprocessing.Pool`` over the files.
* **DataTrove** - ``w1/datatrove_pipeline.py`` in its own venv (``benchmarks/.venv-datatrove``, created from
  ``w1/requirements-datatrove.txt`` on first run): ``ParquetReader -> URLFilter -> LambdaFilter -> ParquetWriter``
  under ``LocalPipelineExecutor(tasks=<files>, workers=1 and 2)``.

mdf and plain Python implement the same semantics, so their kept counts must be equal (asserted). DataTrove's
URLFilter matches tldextract's registered domain and full host instead of walking every parent domain, which
agrees on this data (see ``w1/datatrove_pipeline.py``); its count is printed beside mdf's.

Run from the repository root with mdf's venv active (needs network access to PyPI once, for the DataTrove venv):

    python benchmarks/bench_w1_text_filter.py            # --repeat 3, --rows, --files, --skip-datatrove
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from bench_fixed_cost import fixed_cost_line

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "benchmarks"
BLOCKLIST = ROOT / "examples" / "blocklist.txt"
DT_VENV = HERE / ".venv-datatrove"
DT_PYTHON = DT_VENV / "bin" / "python"
TARGETS = {
    "Polars": 1.0,
    "DataTrove": 8.0,
    "plain Python, 2 processes": 2.0,
}  # system-name prefix: mdf rec/s >= N x the peer's
TARGET_RECS = 100_000


@dataclass
class Result:
    system: str
    wall_s: float
    kept: int
    extra: dict


def dataset(rows: int, files: int) -> list[str]:
    """The cached input files; generated on first use (not timed)."""
    from mdf.demo_data import DemoSpec, write_dataset

    out = HERE / ".data" / f"w1-{rows}x{files}"
    marker = out / "COMPLETE"
    if not marker.exists():
        print(f"generating {rows:,} rows in {files} files under {out} ...", flush=True)
        shutil.rmtree(out, ignore_errors=True)
        write_dataset(str(out), DemoSpec(rows=rows, files=files))
        marker.write_text(json.dumps({"rows": rows, "files": files}))
    paths = sorted(glob.glob(str(out / "*.parquet")))
    for p in paths:  # warm the page cache so the first system timed does not pay for the disk
        Path(p).read_bytes()
    return paths


def datatrove_python() -> Path:
    if not DT_PYTHON.exists():
        print(f"creating {DT_VENV} (pip install -r w1/requirements-datatrove.txt) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(DT_VENV)], check=True)
        pip = [str(DT_PYTHON), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "-r", str(HERE / "w1" / "requirements-datatrove.txt")], check=True)
    return DT_PYTHON


def count_rows(folder: Path) -> int:
    return sum(pq.read_metadata(p).num_rows for p in glob.glob(str(folder / "**" / "*.parquet"), recursive=True))


CPU: list[float] = [0.0]  # user + sys seconds of the last timed command (load-independent, unlike wall)


def timed(cmd: list[str], out: Path, log: Path) -> float:
    """Run ``cmd`` to completion; return its wall-clock seconds. Fails loudly with the tail of its output."""
    with log.open("wb") as f:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT).returncode
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        CPU[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if rc != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise SystemExit(f"{cmd[0]} ... exited {rc}:\n{tail}")
    if not out.exists():
        raise SystemExit(f"{cmd} wrote nothing to {out}")
    return wall


def run_all(repeat: int, systems: dict[str, Callable[[Path], tuple[float, Path, dict]]]) -> list[Result]:
    """Run every system ``repeat`` times, round-robin (a busy machine then slows all alike); keep each one's best."""
    runs: dict[str, list[Result]] = {name: [] for name in systems}
    for i in range(repeat):
        for name, run_once in systems.items():
            with tempfile.TemporaryDirectory(prefix="mdf-w1-") as tmp:
                wall, out, extra = run_once(Path(tmp))
                extra["cpu_s"] = CPU[0]
                runs[name].append(Result(name, wall, count_rows(out), extra))
            print(f"  run {i + 1}/{repeat}  {name:<28} {wall:6.2f} s  cpu {CPU[0]:6.2f} s", flush=True)
    best = []
    for name, results in runs.items():
        kept = {r.kept for r in results}
        assert len(kept) == 1, f"{name}: kept count differs between runs: {kept}"
        fastest = min(results, key=lambda r: r.wall_s)
        fastest.extra["runs"] = " ".join(f"{r.wall_s:.1f}" for r in results)
        best.append(fastest)
    return best


def w1_recipe(files: list[str], out: Path, workers: int | str = "auto") -> dict:
    """W1 as an mdf recipe (URL blocklist + length filter, zstd Parquet out); JSON is YAML."""
    return {
        "reader": {"type": "parquet", "paths": files, "columns": ["id", "url", "text"]},
        "stages": [
            {
                "name": "clean",
                "operators": [
                    {"url_filter": {"blocklist": str(BLOCKLIST)}},
                    {"text_length_filter": {"min_length": 200, "max_length": 100_000}},
                ],
            }
        ],
        "writer": {"type": "parquet", "path": str(out), "compression": "zstd"},
        "executor": {"type": "inline", "workers": workers},
    }


def run_mdf(files: list[str], tmp: Path, workers: int | str = "auto") -> tuple[float, Path, dict]:
    out = tmp / "out"
    recipe = w1_recipe(files, out, workers)
    path = tmp / "w1.yaml"
    path.write_text(json.dumps(recipe, indent=2))
    mdf = shutil.which("mdf", path=str(Path(sys.executable).parent)) or shutil.which("mdf")
    assert mdf, "the `mdf` command is not installed; activate /work/main/.venv or pip install ./core ./plugins/mdf-text"
    launched = time.time()
    wall = timed([mdf, "run", "-q", str(path)], out, tmp / "log")
    metrics = json.loads((out / "_mdf" / "metrics.json").read_text())
    first = metrics.get("first_batch_unix_s", float("nan")) - launched
    return wall, out, {"executor_s": metrics["wall_s"], "rows_written": metrics["rows_written"], "first_batch_s": first}


def run_polars(files: list[str], tmp: Path) -> tuple[float, Path, dict]:
    out = tmp / "out"
    out.mkdir()
    script = HERE / "w1" / "polars_pipeline.py"
    cmd = [sys.executable, str(script), "--blocklist", str(BLOCKLIST), "--out", str(out / "part-0.parquet"), *files]
    return timed(cmd, out, tmp / "log"), out, {}


def run_plain(files: list[str], workers: int, tmp: Path) -> tuple[float, Path, dict]:
    out = tmp / "out"
    script = HERE / "w1" / "plain_python.py"
    cmd = [sys.executable, str(script), "--blocklist", str(BLOCKLIST), "--out", str(out), "--workers", str(workers)]
    return timed([*cmd, *files], out, tmp / "log"), out, {}


def run_datatrove(data_dir: str, tasks: int, workers: int, tmp: Path) -> tuple[float, Path, dict]:
    out = tmp / "out"
    cmd = [str(DT_PYTHON), str(HERE / "w1" / "datatrove_pipeline.py"), "--data", data_dir]
    cmd += ["--blocklist", str(BLOCKLIST), "--out", str(out), "--logs", str(tmp / "logs")]
    cmd += ["--tasks", str(tasks), "--workers", str(workers)]
    return timed(cmd, out, tmp / "log"), out, {}


def main() -> None:
    ap = argparse.ArgumentParser(description="W1: URL blocklist + length filter, mdf vs plain Python vs DataTrove")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3, help="runs per system; the fastest counts")
    ap.add_argument("--skip-datatrove", action="store_true")
    args = ap.parse_args()

    files = dataset(args.rows, args.files)
    rows = sum(pq.read_metadata(p).num_rows for p in files)
    if not args.skip_datatrove:
        datatrove_python()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"W1 on {rows:,} rows in {len(files)} files, {os.cpu_count()} CPUs, load average {load}")
    print(f"wall seconds per run, systems interleaved (the best of {args.repeat} counts):")

    systems = {
        "mdf (inline)": lambda t: run_mdf(files, t),
        "mdf (inline, 1 worker)": lambda t: run_mdf(files, t, 1),
        "Polars (lazy, sink_parquet)": lambda t: run_polars(files, t),
        "plain Python, 1 process": lambda t: run_plain(files, 1, t),
        "plain Python, 2 processes": lambda t: run_plain(files, 2, t),
    }
    if not args.skip_datatrove:
        data_dir = os.path.dirname(files[0])
        for w in (1, 2):
            systems[f"DataTrove, workers={w}"] = lambda t, w=w: run_datatrove(data_dir, len(files), w, t)
    mdf, *peers = run_all(args.repeat, systems)

    print()
    print(f"{'system':<28} {'wall s':>7} {'cpu s':>6} {'rec/s':>9} {'kept rows':>10} {'mdf/peer':>9}   all runs (s)")
    for r in (mdf, *peers):
        ratio = f"{r.wall_s / mdf.wall_s:8.2f}x" if r is not mdf else ""
        cpu = r.extra["cpu_s"]
        print(
            f"{r.system:<28} {r.wall_s:7.2f} {cpu:6.2f} {rows / r.wall_s:9,.0f} {r.kept:10,} {ratio:>9}   {r.extra['runs']}"
        )

    print(fixed_cost_line())  # beside the rates: a run's fixed cost, so it is never read as a per-record one
    print()
    start_up = mdf.wall_s - mdf.extra["executor_s"]
    print(f"mdf: {mdf.extra['executor_s']:.2f} s in the executor, {start_up:.2f} s start-up + planning + exit")
    first = mdf.extra["first_batch_s"]
    print(
        f"mdf start-up before the first batch is read: {first:.3f} s (target <= 0.3 s: {'met' if first <= 0.3 else 'NOT met'})"
    )
    one = next(p for p in peers if p.system == "mdf (inline, 1 worker)")
    print(f"mdf inline, workers auto / 1 worker: {one.wall_s / mdf.wall_s:.2f}x")
    plain = [p for p in peers if p.system.startswith(("plain", "Polars"))]
    for p in plain:
        print(f"kept rows: mdf {mdf.kept:,} == {p.system} {p.kept:,}: {mdf.kept == p.kept}")
        assert mdf.kept == p.kept, f"mdf and {p.system} implement the same filter but keep different rows"
    assert mdf.kept == mdf.extra["rows_written"], "mdf's metrics.json disagrees with its output files"
    for p in peers:
        if p.system.startswith("DataTrove"):
            diff = p.kept - mdf.kept
            print(f"kept rows: mdf {mdf.kept:,} vs {p.system} {p.kept:,} (difference {diff:+,})")

    print()
    rate = rows / mdf.wall_s
    print(f"target mdf >= {TARGET_RECS:,} rec/s: {rate:,.0f} rec/s -> {'met' if rate >= TARGET_RECS else 'NOT met'}")
    for p in peers:
        factor = next((f for prefix, f in TARGETS.items() if p.system.startswith(prefix)), None)
        if factor is not None:
            ratio = p.wall_s / mdf.wall_s
            print(f"target mdf >= {factor:g}x {p.system}: {ratio:.2f}x -> {'met' if ratio >= factor else 'NOT met'}")
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
