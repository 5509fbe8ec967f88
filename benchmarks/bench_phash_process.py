"""pHash of a folder of JPEGs as a whole process: ``mdf run`` (``image_folder`` -> ``image_phash_refiner`` ->
Parquet) vs the imagehash script a user writes, one process and one per core.

Why whole process: ``bench_image_kernels.py`` times the hash kernel alone in one thread. A user compares jobs:
start Python, list the folder, read and decode every file, hash it, write the hashes. On 2,000 images the
interpreter, imports and I/O are a visible part of that (issue 24's pHash row).

Data: ``--images`` JPEGs (default 2,000) cycled from ``mdf_image.testdata.near_duplicate_set`` (real photographs
of 150 to 1,411 pixels a side, their near-duplicate copies and tiles; 20 to 400 KB), written once to a folder
under ``benchmarks/.data/``.

* **mdf** - ``mdf run -q``: ``image_folder`` -> ``image_phash_refiner`` (it computes four hashes: phash, dhash,
  phash_crop, phash_flip) -> zstd Parquet without the image bytes; inline executor, every core.
* **imagehash, 1 process** - ``imagehash.phash(Image.open(path))`` per file (one hash), pyarrow write.
* **imagehash, N processes** - the same in a ``multiprocessing.Pool`` of one process per core.

Each is its own subprocess, timed from launch to exit, round-robin, best of ``--repeat``; every system writes one
row per image (asserted). Target (issue 24): >= 3x the imagehash script.

    python benchmarks/bench_phash_process.py [--images 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / ".data"
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_fixed_cost import fixed_cost_line  # noqa: E402
from bench_kernels_common import timed_process  # noqa: E402

SCRIPT = """
import glob, os, sys
from multiprocessing import Pool
import imagehash, pyarrow as pa, pyarrow.parquet as pq
from PIL import Image

def phash(path):
    with Image.open(path) as img:
        return int(str(imagehash.phash(img)), 16)

if __name__ == "__main__":
    paths = sorted(glob.glob(os.path.join(sys.argv[1], "**", "*.jpg"), recursive=True))
    procs = int(sys.argv[3])
    if procs == 1:
        hashes = [phash(p) for p in paths]
    else:
        with Pool(procs) as pool:
            hashes = pool.map(phash, paths, chunksize=16)
    pq.write_table(pa.table({"path": paths, "phash": pa.array(hashes, pa.uint64())}), sys.argv[2], compression="zstd")
"""


def image_folder(n: int) -> Path:
    """``n`` JPEG files cycled from the real test photographs (written once, reused)."""
    folder = DATA / f"phash-folder-{n}"
    if folder.exists():
        return folder
    from mdf_image.testdata import near_duplicate_set, sniff_extension

    table = near_duplicate_set()
    images = [b for b in table.column("image").to_pylist() if sniff_extension(b) == "jpg"]
    tmp = Path(tempfile.mkdtemp(dir=DATA))
    for i in range(n):
        sub = tmp / f"{i // 500:03d}"
        sub.mkdir(exist_ok=True)
        (sub / f"img-{i:06d}.jpg").write_bytes(images[i % len(images)])
    tmp.rename(folder)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    folder = image_folder(args.images)
    work = Path(tempfile.mkdtemp(prefix="mdf-bench-phash-"))
    script = work / "phash_job.py"
    script.write_text(SCRIPT)
    recipe = {
        "reader": {"type": "image_folder", "paths": [str(folder)]},
        "stages": [{"name": "hash", "operators": [{"image_phash_refiner": {}}]}],
        "writer": {"type": "parquet", "path": str(work / "mdf-out"), "drop_columns": ["image"]},
    }
    (work / "r.yaml").write_text(yaml.safe_dump(recipe))
    cores = os.cpu_count() or 1
    mdf = str(Path(sys.executable).parent / "mdf")
    cmds = {
        "mdf": [mdf, "run", "-q", "--overwrite", str(work / "r.yaml")],
        "imagehash, 1 process": [sys.executable, str(script), str(folder), str(work / "one.parquet"), "1"],
        f"imagehash, {cores} processes": [
            sys.executable,
            str(script),
            str(folder),
            str(work / "n.parquet"),
            str(cores),
        ],
    }
    best = {name: float("inf") for name in cmds}
    for _ in range(args.repeat):
        for name, cmd in cmds.items():
            best[name] = min(best[name], timed_process(cmd))
    rows = [pq.read_table(p).num_rows for p in (work / "mdf-out", work / "one.parquet", work / "n.parquet")]
    assert rows == [args.images] * 3, f"rows written differ: {rows}"
    print(f"{args.images:,} JPEGs, {cores} cores, best of {args.repeat}, load {os.getloadavg()[0]:.1f}")
    for name, wall in best.items():
        print(f"  {name:24s} {wall:7.2f} s  {args.images / wall:8,.0f} images/s")
    for name in list(cmds)[1:]:
        ratio = best[name] / best["mdf"]
        print(f"  mdf / {name:17s} {ratio:.2f}x   target >= 3x: {'MET' if ratio >= 3 else 'not met'}")
    print(fixed_cost_line())  # beside the rates: a run's fixed cost, never read as a per-record one


if __name__ == "__main__":
    main()
