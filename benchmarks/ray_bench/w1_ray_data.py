"""W1 as a Ray Data pipeline, with mdf's own operator code: read_parquet -> map_batches -> write_parquet.

``map_batches`` gets ``pyarrow.Table`` batches and runs mdf_text's ``UrlFilter`` then ``TextLengthFilter``
(``Operator.process``, exactly what an mdf stage runs) on each record batch of the table, built once per worker
process. Output is zstd Parquet like mdf's. Needs pandas (Ray Data imports it): the benchmark puts it on ``PYTHONPATH``.

    python benchmarks/ray_bench/w1_ray_data.py IN_DIR OUT_DIR BLOCKLIST [--batch-size 8192]
"""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

import pyarrow as pa

_OPS: list[Any] = []


def _operators(blocklist: str) -> list[Any]:
    if not _OPS:
        from mdf_text.ops.length import TextLengthFilter
        from mdf_text.ops.url import UrlFilter

        _OPS.extend([UrlFilter(blocklist=blocklist), TextLengthFilter(min_length=200, max_length=100_000)])
    return _OPS


def w1(table: pa.Table, blocklist: str) -> pa.Table:
    """mdf operators take ``RecordBatch``es: run them on each chunk of the table (no copy), like an mdf stage."""
    from mdf.operators import BatchContext

    ops = _operators(blocklist)
    ctx = BatchContext("ray-data", 0, 0)
    out = []
    for batch in table.to_batches():
        for op in ops:
            if batch.num_rows == 0:
                break
            batch, _rejected = op.process(batch, ctx)
        out.append(batch)
    return pa.Table.from_batches(out, schema=table.schema)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("blocklist")
    ap.add_argument("--batch-size", type=int, default=8192)
    args = ap.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    ray.init(include_dashboard=False, logging_level=logging.WARNING)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ds = ray.data.read_parquet(args.inp).select_columns(["id", "url", "text"])  # pushed down into the read
    ds = ds.map_batches(w1, batch_format="pyarrow", batch_size=args.batch_size, fn_kwargs={"blocklist": args.blocklist})
    ds.write_parquet(args.out, compression="zstd")
    ray.shutdown()


if __name__ == "__main__":
    main()
