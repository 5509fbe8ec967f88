"""KeySet.insert_new throughput (M keys/s) and memory per key for 10 M keys, vs a Python set
loop as the peer.

Run: python benchmarks/bench_kernels_keyset.py
"""

from __future__ import annotations

import sys
import time

from bench_kernels_common import emit, run_worker, worker_name

N_KEYS = 10_000_000
BATCH = 1_000_000


def keys():
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(0)
    # 10 M random 64-bit keys with ~10% repeats, like content hashes of a crawl.
    k = rng.integers(0, 2**64 - 1, size=N_KEYS, dtype=np.uint64, endpoint=True)
    dup = rng.random(N_KEYS) < 0.1
    k[dup] = k[rng.integers(0, N_KEYS, size=int(dup.sum()))]
    return pa.array(k)


def worker(name: str) -> None:
    arr = keys()
    if name.startswith("mdf"):
        import mdf_kernels as mk

        ks = mk.KeySet(capacity=N_KEYS if name == "mdf-presized" else None)
        t0 = time.perf_counter()
        new = 0
        for off in range(0, N_KEYS, BATCH):
            new += mk_true(ks.insert_new(arr.slice(off, BATCH)))
        secs = time.perf_counter() - t0
        t0 = time.perf_counter()
        ks.contains(arr)
        csecs = time.perf_counter() - t0
        emit(
            {
                "mkeys_per_s": N_KEYS / secs / 1e6,
                "contains_mkeys_per_s": N_KEYS / csecs / 1e6,
                "bytes_per_key": ks.memory_bytes() / len(ks),
                "distinct": len(ks),
                "new": new,
            }
        )
    else:
        seen = set()
        sample = arr.slice(0, 2_000_000).to_pylist()
        t0 = time.perf_counter()
        out = []
        for k in sample:
            out.append(k not in seen)
            seen.add(k)
        secs = time.perf_counter() - t0
        emit({"mkeys_per_s": len(sample) / secs / 1e6})


def mk_true(bools) -> int:
    import pyarrow.compute as pc

    return pc.sum(bools).as_py() or 0


def main() -> None:
    one = {"MDF_NUM_THREADS": "1"}
    mdf = run_worker(__file__, "mdf", one)
    pre = run_worker(__file__, "mdf-presized", one)
    py = run_worker(__file__, "python", one)
    print(f"KeySet.insert_new, {N_KEYS / 1e6:.0f} M uint64 keys in batches of {BATCH / 1e6:.0f} M, single thread")
    print(f"  mdf KeySet.insert_new  {mdf['mkeys_per_s']:8.1f} M keys/s  ({mdf['distinct']:,} distinct keys)")
    print(f"  same, KeySet(capacity=10M) {pre['mkeys_per_s']:4.1f} M keys/s  ({pre['bytes_per_key']:.1f} bytes/key)")
    print(
        f"  Python set loop        {py['mkeys_per_s']:8.1f} M keys/s   ratio {mdf['mkeys_per_s'] / py['mkeys_per_s']:.1f}x"
    )
    print(f"  KeySet.contains (10 M) {mdf['contains_mkeys_per_s']:8.1f} M keys/s")
    print(f"  memory                 {mdf['bytes_per_key']:8.1f} bytes/key at {mdf['distinct']:,} keys")


if __name__ == "__main__":
    name = worker_name()
    worker(name) if name else main()
    sys.exit(0)
