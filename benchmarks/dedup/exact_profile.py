"""Where ``exact_dedup``'s time goes in an inline ``mdf run`` (part of ``bench_dedup_exact.py``, run by it as a
subprocess with mdf's python).

In one process, the recipe is run through ``mdf.run.run_recipe`` with timers wrapped around the methods
that do the work (wrappers are class attributes set before the run; nothing in mdf is edited):

* read   - each ``next()`` of ``ParquetReader.read`` (Parquet decode; mdf runs it one batch ahead in a thread)
* hash   - ``ExactDedup.keys`` (``mdf_kernels.hash64`` of the text column)
* claim  - ``KeyState.claim`` (the key set's ``insert_new`` plus claimant bits)
* filter - ``Deduplicator._split`` (the kept/duplicate ``RecordBatch.filter``)
* glue   - the rest of ``Operator.process`` (null mask, numpy conversion, slot numbers)
* write  - ``ParquetWriter.write`` + ``commit`` (zstd encode + file I/O; mdf runs it in a writer thread)

Busy seconds per phase are summed over threads, so they can exceed the wall time when read and write overlap
the operator. The same run with ``noop_refiner`` instead of ``exact_dedup`` (read + write only) and a bare
pyarrow ``read_table``/``write_table(zstd)`` loop are the floors.

Usage: ``python exact_profile.py --out DIR FILES...``; prints one JSON line.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from collections import defaultdict

BUSY: dict[str, float] = defaultdict(float)


def timer(phase: str, fn):
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            BUSY[phase] += time.perf_counter() - t0

    return wrapped


def timed_iter(fn):
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        it = iter(fn(*args, **kwargs))
        while True:
            t0 = time.perf_counter()
            try:
                item = next(it)
            except StopIteration:
                BUSY["read"] += time.perf_counter() - t0
                return
            BUSY["read"] += time.perf_counter() - t0
            yield item

    return wrapped


def instrument() -> None:
    from mdf.deduplicator import Deduplicator
    from mdf.io.parquet import ParquetReader, ParquetWriter
    from mdf.state import KeyState
    from mdf_dedup.ops.exact import ExactDedup

    ParquetReader.read = timed_iter(ParquetReader.read)
    ParquetWriter.write = timer("write", ParquetWriter.write)
    ParquetWriter.commit = timer("write", ParquetWriter.commit)
    ExactDedup.keys = timer("hash", ExactDedup.keys)
    KeyState.claim = timer("claim", KeyState.claim)
    Deduplicator._split = timer("filter", Deduplicator._split)
    ExactDedup.process = timer("operator", ExactDedup.process)


def run(files: list[str], out: str, op: str | dict) -> dict:
    from mdf.resolve import parse_recipe
    from mdf.run import run_recipe

    recipe = {
        "reader": {"type": "parquet", "paths": files},
        "stages": [{"name": "s", "operators": [op]}],
        "writer": {"type": "parquet", "path": out, "compression": "zstd"},
        "executor": {"type": "inline"},
    }
    BUSY.clear()
    t0 = time.perf_counter()
    metrics = run_recipe(parse_recipe(recipe))
    wall = time.perf_counter() - t0
    busy = dict(BUSY)
    if "operator" in busy:
        busy["glue"] = busy.pop("operator") - sum(busy.get(k, 0.0) for k in ("hash", "claim", "filter"))
    return {"wall_s": wall, "executor_s": metrics.wall_s, "rows_written": metrics.rows_written, "busy": busy}


def pyarrow_floor(files: list[str], out: str) -> float:
    import pyarrow.parquet as pq

    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    for k, f in enumerate(files):
        pq.write_table(pq.read_table(f), os.path.join(out, f"part-{k}.parquet"), compression="zstd")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    instrument()
    result = {
        "pyarrow_floor_s": pyarrow_floor(args.files, os.path.join(args.out, "pa")),
        "noop": run(args.files, os.path.join(args.out, "noop"), "noop_refiner"),
        "exact": run(args.files, os.path.join(args.out, "exact"), {"exact_dedup": {"column": "text"}}),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
