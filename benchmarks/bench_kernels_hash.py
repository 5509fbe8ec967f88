"""hash64 throughput vs a Python loop over the xxhash package, per core, with a rough memory
bandwidth reference (numpy copy of a large array).

Run: python benchmarks/bench_kernels_hash.py
"""

from __future__ import annotations

import sys

from bench_kernels_common import best_of, emit, english_like_texts, run_worker, worker_name

N_SHORT = 1_000_000  # ~40-byte rows: per-row overhead dominates
N_LONG = 4_000  # ~2.5 KB rows: hashing speed dominates


def short_rows() -> list[str]:
    return [f"https://example.com/page/{i}?ref={i * 7919 % 100003}" for i in range(N_SHORT)]


def worker(name: str) -> None:
    import pyarrow as pa

    if name == "mdf":
        import mdf_kernels as mk

        res = {}
        for label, rows, repeat in (("short", short_rows(), 5), ("long", english_like_texts(N_LONG) * 25, 5)):
            arr = pa.array(rows)
            nbytes = arr.buffers()[2].size
            secs = best_of(lambda: mk.hash64(arr), repeat)
            res[label] = {"rows_per_s": len(arr) / secs, "gb_per_s": nbytes / secs / 1e9}
        arr = pa.array(english_like_texts(N_LONG))
        res["alnum_rows_per_s"] = N_LONG / best_of(lambda: mk.hash64(arr, normalize="alnum"))
        emit(res)
    elif name == "xxhash":
        import xxhash

        res = {}
        for label, rows in (("short", short_rows()), ("long", english_like_texts(N_LONG) * 25)):
            arr = pa.array(rows)
            nbytes = arr.buffers()[2].size

            def loop():
                f = xxhash.xxh3_64_intdigest
                pa.array([None if s is None else f(s.encode()) for s in arr.to_pylist()], pa.uint64())

            secs = best_of(loop, 2)
            res[label] = {"rows_per_s": len(arr) / secs, "gb_per_s": nbytes / secs / 1e9}
        emit(res)
    elif name == "membw":
        import numpy as np

        src = np.ones(256 * 1024 * 1024 // 8, dtype=np.float64)
        dst = np.empty_like(src)
        secs = best_of(lambda: np.copyto(dst, src), 5)
        emit({"copy_gb_per_s": 2 * src.nbytes / secs / 1e9})  # read + write


def main() -> None:
    one = {"MDF_NUM_THREADS": "1"}
    mdf = run_worker(__file__, "mdf", one)
    py = run_worker(__file__, "xxhash", one)
    bw = run_worker(__file__, "membw", one)
    print(
        "hash64 (xxh3-64), single thread; Python peer = [xxhash.xxh3_64_intdigest(s.encode()) for s in arr.to_pylist()]"
    )
    for label, desc in (("short", "1M URLs ~40 B"), ("long", "100k texts ~2.5 KB")):
        m, p = mdf[label], py[label]
        print(
            f"  {desc:20s} mdf {m['rows_per_s']:14,.0f} rows/s {m['gb_per_s']:6.2f} GB/s | "
            f"python {p['rows_per_s']:12,.0f} rows/s {p['gb_per_s']:6.2f} GB/s | ratio {m['rows_per_s'] / p['rows_per_s']:6.1f}x"
        )
    print(f"  hash64(normalize='alnum') on ~2.5 KB texts: {mdf['alnum_rows_per_s']:,.0f} rows/s")
    print(f"  memory bandwidth reference (numpy copyto, read+write, 1 thread): {bw['copy_gb_per_s']:.1f} GB/s")


if __name__ == "__main__":
    name = worker_name()
    worker(name) if name else main()
    sys.exit(0)
