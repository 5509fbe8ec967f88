"""W2 peer: Polars' exact dedup, ``scan_parquet -> unique(text, keep first, input order) -> sink_parquet``.

zstd level 1 and mdf's row-group size. Usage: ``python exact_polars.py IN.parquet ... --out DIR``.
"""

from __future__ import annotations

import argparse
import os

import polars as pl


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    plan = pl.scan_parquet(args.files).unique(subset=["text"], keep="first", maintain_order=True)
    plan.sink_parquet(
        os.path.join(args.out, "part-0.parquet"), compression="zstd", compression_level=1, row_group_size=128 * 1024
    )


if __name__ == "__main__":
    main()
