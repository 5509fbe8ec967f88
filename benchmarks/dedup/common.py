"""Shared by ``bench_dedup_minhash.py`` and ``bench_dedup_exact.py``: the cached input, timed subprocesses run
round-robin, kept-row counting and precision/recall against the ground truth of ``mdf.demo_data.dedup_table``."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent  # benchmarks/dedup
ROOT = HERE.parent.parent
DATA = HERE.parent / ".data"
DT_VENV = HERE.parent / ".venv-datatrove"
DT_PYTHON = DT_VENV / "bin" / "python"


def dedup_dataset(
    rows: int, files: int, exact_rate: float, near_rate: float, change_rate: float, seed: int
) -> list[str]:
    """``files`` zstd Parquet files (row groups of 8,192) holding ``dedup_table(rows, ...)`` in order, cached
    under ``benchmarks/.data/``; generation is not timed. The files are read once to warm the page cache."""
    from mdf.demo_data import dedup_table

    out = DATA / f"dedup-{rows}-e{exact_rate}-n{near_rate}-c{change_rate}-s{seed}x{files}"
    marker = out / "COMPLETE"
    if not marker.exists():
        print(f"generating {rows:,} rows in {files} files under {out} ...", flush=True)
        t0 = time.perf_counter()
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        table = dedup_table(rows, exact_rate=exact_rate, near_rate=near_rate, change_rate=change_rate, seed=seed)
        per = -(-rows // files)
        for k in range(files):
            part = table.slice(k * per, per)
            pq.write_table(part, out / f"part-{k:03d}.parquet", row_group_size=8192, compression="zstd")
        marker.write_text(json.dumps({"rows": rows, "files": files, "gen_s": round(time.perf_counter() - t0, 1)}))
    paths = sorted(glob.glob(str(out / "*.parquet")))
    for p in paths:
        Path(p).read_bytes()
    return paths


def read_input(paths: list[str], columns: list[str] | None = None) -> pa.Table:
    return pa.concat_tables([pq.read_table(p, columns=columns) for p in paths])


def output_files(folder: Path) -> list[str]:
    return sorted(glob.glob(str(folder / "**" / "*.parquet"), recursive=True))


def kept_ids(folder: Path) -> pa.Array:
    files = output_files(folder)
    if not files:
        return pa.array([], pa.string())
    return pa.concat_arrays([pq.read_table(f, columns=["id"]).column("id").combine_chunks() for f in files])


def precision_recall(truth: pa.Table, kept: pa.Array) -> tuple[float, float, int]:
    """(precision, recall, removed rows). Per ground-truth group all rows but one should go; the removed rows
    of a group count as right up to that number (as ``plugins/mdf-dedup/tests/test_minhash.py``)."""
    removed = ~np.asarray(pc.is_in(truth.column("id"), value_set=kept))
    groups = truth.column("group").to_numpy()
    dup_per_group = np.bincount(groups, minlength=groups.max() + 1) - 1
    rej_per_group = np.bincount(groups[removed], minlength=len(dup_per_group))
    right = np.minimum(rej_per_group, np.maximum(dup_per_group, 0)).sum()
    n_removed = int(removed.sum())
    return right / max(n_removed, 1), right / max(dup_per_group[dup_per_group > 0].sum(), 1), n_removed


def timed(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> float:
    """Run ``cmd`` to completion from the repository root; its wall-clock seconds. Fails with its output tail."""
    with log.open("wb") as f:
        start = time.perf_counter()
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, **(env or {})})
        wall = time.perf_counter() - start
    if rc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} ... exited {rc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
    return wall


def mdf_command() -> str:
    mdf = shutil.which("mdf", path=str(Path(sys.executable).parent)) or shutil.which("mdf")
    assert mdf, "the `mdf` command is not installed; activate /work/main/.venv"
    return mdf


def mdf_system(
    files: list[str], op: str | dict, executor: str, **executor_params: object
) -> Callable[[Path], tuple[float, Path, dict]]:
    """A system for :func:`run_all`: ``mdf run`` of one stage holding ``op`` over ``files``, zstd Parquet out."""

    def run(tmp: Path) -> tuple[float, Path, dict]:
        recipe = {
            "reader": {"type": "parquet", "paths": files},
            "stages": [{"name": "dedup", "operators": [op]}],
            "writer": {"type": "parquet", "path": str(tmp / "out"), "compression": "zstd"},
            "executor": {"type": executor, **executor_params},
        }
        return run_mdf(recipe, tmp)

    return run


def run_mdf(recipe: dict, tmp: Path) -> tuple[float, Path, dict]:
    """``mdf run -q recipe.yaml`` (the recipe's writer must write to ``tmp/out``); wall s, output, metrics."""
    path = tmp / "recipe.yaml"
    path.write_text(json.dumps(recipe, indent=2))  # JSON is YAML
    wall = timed([mdf_command(), "run", "-q", str(path)], tmp / "log")
    metrics = json.loads((tmp / "out" / "_mdf" / "metrics.json").read_text())
    return wall, tmp / "out", {"executor_s": metrics.get("wall_s", float("nan"))}


@dataclass
class Result:
    system: str
    wall_s: float
    kept: pa.Array
    extra: dict = field(default_factory=dict)
    runs: list[float] = field(default_factory=list)
    kept_runs: list[int] = field(default_factory=list)


System = Callable[[Path], tuple[float, Path, dict]]


def run_all(repeat: int, systems: dict[str, System], strict: tuple[str, ...] = ()) -> list[Result]:
    """Run every system ``repeat`` times round-robin (a busy machine then slows all alike) and keep each one's
    fastest run. Systems named in ``strict`` must keep the same number of rows every run; for the others a
    differing count is recorded in ``extra["kept_runs"]``."""
    best: dict[str, Result] = {}
    for i in range(repeat):
        for name, run_once in systems.items():
            with tempfile.TemporaryDirectory(prefix="mdf-dedup-bench-") as tmp:
                wall, out, extra = run_once(Path(tmp))
                kept = kept_ids(out)
            print(f"  run {i + 1}/{repeat}  {name:<36} {wall:7.2f} s  kept {len(kept):,}", flush=True)
            prev = best.get(name)
            if prev is not None:
                assert name not in strict or len(prev.kept) == len(kept), f"{name}: kept count differs between runs"
                prev.runs.append(wall)
                prev.kept_runs.append(len(kept))
                if wall < prev.wall_s:
                    prev.wall_s, prev.kept, prev.extra = wall, kept, extra
            else:
                best[name] = Result(name, wall, kept, extra, [wall], [len(kept)])
    return list(best.values())


def load_line() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())
