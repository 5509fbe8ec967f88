"""The CPU image stage (metadata + technical quality + quality filter + pHash) through mdf vs Pillow + numpy + imagehash.

The seed claims 1,630 rec/s on 8 CPUs for this stage; this prints our figure on this machine beside it.

Input: ``--images`` JPEGs (default 400) cycled from ``mdf_image.testdata.near_duplicate_set`` (real photographs
of 150 to 1411 pixels a side, their near-duplicate copies and tiles; 20 to 400 KB), in one LAION-style Parquet
file generated once under ``benchmarks/.data/``. Both pipelines read that file, compute the same columns, apply
the same thresholds and write the kept rows as zstd Parquet, in this process, best of ``--repeat`` runs:

* **mdf** - ``examples/image.yaml``'s stage run with ``mdf.run.run_recipe`` on the inline executor (one
  process; the kernels use ``MDF_NUM_THREADS`` threads, default all cores). Also run in a child process with
  ``MDF_NUM_THREADS=1`` for the single-thread figure.
* **Python** - what users write without mdf: per row ``PIL.Image.open`` for format/size/mode/EXIF orientation,
  decode + ``convert``, the six metrics in numpy with the kernels' definitions (box reduction to 512 pixels,
  Laplacian variance, histogram entropy, mean, std, Hasler-Suesstrunk colourfulness, 8x8 grid blockiness),
  ``imagehash.phash``/``dhash`` and a pHash of the centre crop, one thread.

Run from the repository root with mdf's venv active (mdf-image, mdf-kernels, imagehash, scikit-image installed):

    python benchmarks/bench_image_pipeline.py            # --images 400 --repeat 2
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / ".data"
SEED_CLAIM = (1630.0, 8)  # rec/s, CPUs
THRESHOLDS = {"min_width": 128, "min_height": 128, "min_sharpness": 10.0, "min_entropy": 4.0, "max_blockiness": 2.5}


def make_input(n: int) -> Path:
    from mdf_image import testdata

    path = DATA / f"image-pipeline-{n}.parquet"
    if not path.exists():
        base = testdata.near_duplicate_set()
        idx = pa.array([i % base.num_rows for i in range(n)])
        table = base.take(idx).select(["image", "source", "transform"])
        table = table.add_column(0, "id", pa.array([f"img-{i:06d}" for i in range(n)]))
        testdata.write_laion_parquet(table, str(path), row_group_rows=64)
    return path


def run_mdf(path: Path, out: str) -> tuple[float, int, dict[str, float]]:
    from mdf.resolve import parse_recipe
    from mdf.run import run_recipe

    recipe = {
        "reader": {"type": "laion_parquet", "paths": [str(path)], "id_column": "id"},
        "stages": [
            {
                "name": "images",
                "operators": [
                    "image_metadata_refiner",
                    {"image_technical_quality_refiner": {"max_side": 512}},
                    {"image_quality_filter": THRESHOLDS},
                    "image_phash_refiner",
                ],
            }
        ],
        "writer": {"type": "parquet", "path": out},
        "executor": {"type": "inline", "batch_rows": 64},
    }
    parsed = parse_recipe(recipe)
    start = time.perf_counter()
    metrics = run_recipe(parsed)
    op_s = {op.name: op.time_s for op in metrics.operators()}
    return time.perf_counter() - start, metrics.rows_written, op_s


def py_quality(img, max_side: int = 512) -> dict:
    """The six metrics with the kernels' definitions, in Pillow + numpy (see mdf-kernels' image/quality.rs)."""
    rgb = img.convert("RGB")
    g = np.asarray(rgb.convert("L"), np.int16)
    dh, dv = np.abs(np.diff(g, axis=1)), np.abs(np.diff(g, axis=0))
    across = dh[:, 7::8].sum() + dv[7::8, :].sum()
    n_across = dh[:, 7::8].size + dv[7::8, :].size
    inside, n_inside = dh.sum() + dv.sum() - across, dh.size + dv.size - n_across
    blockiness = (across / max(n_across, 1) + 0.01) / (inside / max(n_inside, 1) + 0.01) if n_across else 1.0
    k = -(-max(rgb.size) // max_side)
    if k > 1:
        rgb = rgb.reduce(k)
    grey = np.asarray(rgb.convert("L"), np.float64)
    p = np.bincount(grey.astype(np.int64).ravel(), minlength=256) / grey.size
    p = p[p > 0]
    lap = grey[:-2, 1:-1] + grey[2:, 1:-1] + grey[1:-1, :-2] + grey[1:-1, 2:] - 4 * grey[1:-1, 1:-1]
    a = np.asarray(rgb, np.float64)
    rg, yb = a[..., 0] - a[..., 1], (a[..., 0] + a[..., 1]) / 2 - a[..., 2]
    return {
        "sharpness": float(lap.var()),
        "entropy": float(-(p * np.log2(p)).sum()),
        "brightness": float(grey.mean()),
        "contrast": float(grey.std()),
        "colorfulness": float(np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean())),
        "blockiness": float(blockiness),
    }


def run_python(path: Path, out: str) -> tuple[float, int]:
    import imagehash
    from PIL import Image

    start = time.perf_counter()
    table = pq.read_table(path)
    rows = []
    for row in table.to_pylist():
        try:
            img = Image.open(io.BytesIO(row["image"]))
            meta = {"format": img.format.lower(), "width": img.width, "height": img.height, "mode": img.mode}
            meta |= {"orientation": img.getexif().get(0x0112, 1), "num_bytes": len(row["image"])}
            img.load()
            q = py_quality(img)
        except OSError:
            continue
        t = THRESHOLDS
        if (
            meta["width"] < t["min_width"]
            or meta["height"] < t["min_height"]
            or q["sharpness"] < t["min_sharpness"]
            or q["entropy"] < t["min_entropy"]
            or q["blockiness"] > t["max_blockiness"]
        ):
            continue
        w, h = img.size
        centre = img.crop((round(w * 0.05), round(h * 0.05), round(w * 0.95), round(h * 0.95)))
        hashes = {
            "phash": int(str(imagehash.phash(img)), 16),
            "dhash": int(str(imagehash.dhash(img)), 16),
            "phash_crop": int(str(imagehash.phash(centre)), 16),
        }
        rows.append({**row, **meta, **q, **hashes})
    hash_types = {c: pa.uint64() for c in ("phash", "dhash", "phash_crop")}
    schema = pa.schema([pa.field(c, hash_types.get(c) or pa.array([rows[0][c]]).type) for c in rows[0]])
    kept = pa.Table.from_pylist(rows, schema=schema)
    os.makedirs(out, exist_ok=True)
    pq.write_table(kept, os.path.join(out, "part-0.parquet"), compression="zstd")
    return time.perf_counter() - start, kept.num_rows


def best(fn, path: Path, repeat: int) -> tuple:
    runs = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(fn(path, os.path.join(tmp, "out")))
    return min(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--only-mdf", action="store_true", help="(child mode) time mdf alone, print JSON")
    args = ap.parse_args()
    path = make_input(args.images)
    if args.only_mdf:
        wall, kept, _ = best(run_mdf, path, args.repeat)
        print(json.dumps({"wall": wall, "kept": kept}))
        return
    n = args.images
    mdf_wall, mdf_kept, op_s = best(run_mdf, path, args.repeat)
    child = subprocess.run(
        [sys.executable, __file__, "--only-mdf", "--images", str(n), "--repeat", str(args.repeat)],
        env={**os.environ, "MDF_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    one = json.loads(child.stdout.strip().splitlines()[-1])
    py_wall, py_kept = best(run_python, path, args.repeat)
    cores = os.cpu_count() or 1
    claim, claim_cpus = SEED_CLAIM
    print(f"CPU image stage on {n} JPEGs ({path.stat().st_size / 1e6:.1f} MB), {cores} cores, best of {args.repeat}")
    print(f"{'pipeline':<42} {'wall s':>8} {'rec/s':>8} {'kept':>6} {'vs Python':>10}")
    for name, wall, kept in (
        (f"mdf inline, kernels on {cores} threads", mdf_wall, mdf_kept),
        ("mdf inline, MDF_NUM_THREADS=1", one["wall"], one["kept"]),
        ("Pillow + numpy + imagehash, 1 thread", py_wall, py_kept),
    ):
        print(f"{name:<42} {wall:8.2f} {n / wall:8.0f} {kept:6d} {py_wall / wall:9.1f}x")
    print(
        f"seed claim: {claim:,.0f} rec/s on {claim_cpus} CPUs ({claim / claim_cpus:,.0f} rec/s per CPU); "
        f"mdf here: {n / mdf_wall:,.0f} rec/s on {cores} cores ({n / mdf_wall / cores:,.0f} per core)"
    )
    print(f"mdf time by operator ({cores} threads): " + ", ".join(f"{k} {v:.2f} s" for k, v in op_s.items()))
    if mdf_kept != py_kept:
        print(f"note: kept counts differ ({mdf_kept} vs {py_kept}): decoders differ by a grey level near thresholds")


if __name__ == "__main__":
    main()
