"""Key-state throughput: ``mdf.state.KeyState.claim`` on a local Ray with 4 bucket actors, end to end.

What a deduplicator does per batch: ``claim(namespace, keys, shard, slots)`` with ``uint64`` keys and one slot
per key; the service routes the keys by ``key % buckets``, sends every bucket its part (all requests in flight
before any is awaited), and merges the answers. Timed here from the caller: numpy routing, Ray serialisation,
the bucket actors' ``KeySet.insert_new`` and claimant bits, and the reply - keys/s = keys claimed / wall s.

The keys: ``--batches`` batches of ``--batch-keys`` random ``uint64`` (100 K by default), each batch a new shard
with slots ``0..n-1``; ``--repeat-rate`` of each batch repeats keys of earlier batches (answered "not new").
Every configuration claims the same keys into a fresh state, and the number answered "new" must equal the
number of distinct keys (asserted), so a fast wrong answer cannot pass.

* **in process** - ``KeyState.local(1)`` and ``KeyState.local(4)``: the inline executor's state, no Ray (the
  reference: the cost of the key set itself).
* **Ray, 4 buckets, 1 caller** - ``ray_key_state(4, ...)`` called from the driver, batch after batch.
* **Ray, 4 buckets, 2 callers** - two Ray actors (``num_cpus=0``) each claiming half of the batches at once
  through the same ``KeyState`` (as two stage replicas do), timed from both starting to both done.

Ray is started by the script (``ray.init`` on this machine, not timed) and shut down at the end. Best of
``--repeat`` for each. Run from the repository root with mdf's venv active:

    python benchmarks/bench_keystate_ray.py      # --batches 40 --batch-keys 100000 --buckets 4 --repeat 3
"""

from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # before ray is imported (as tests/conftest.py)
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import argparse
import time

import numpy as np

from mdf.executor.ray.buckets import ray_key_state
from mdf.state import KeyState

TARGET = 1_000_000  # keys/s, Ray with 4 buckets
NAMESPACE = "bench"


def make_batches(batches: int, size: int, repeat_rate: float, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for i in range(batches):
        keys = rng.integers(0, 2**64 - 1, size=size, dtype=np.uint64, endpoint=True)
        if i:
            n = int(size * repeat_rate)
            earlier = np.concatenate(out[max(0, i - 4) : i])
            keys[:n] = rng.choice(earlier, size=n, replace=False)
            rng.shuffle(keys)
        out.append(keys)
    return out


def claim_all(state: KeyState, batches: list[np.ndarray], first: int = 0) -> int:
    """Claim every batch (shard ``b<index>``); return how many keys were answered new."""
    new = 0
    for i, keys in enumerate(batches):
        slots = np.arange(len(keys), dtype=np.uint64)
        new += int(state.claim(NAMESPACE, keys, f"b{first + i}", slots).sum())
    return new


class Caller:
    """A Ray actor claiming its share of the batches through a shared ``KeyState`` (as a stage replica does)."""

    def __init__(self, state: KeyState, batches: list[np.ndarray], first: int) -> None:
        self.state, self.batches, self.first = state, [b.copy() for b in batches], first

    def run(self) -> int:
        return claim_all(self.state, self.batches, self.first)


def best_rate(label: str, repeat: int, total: int, distinct: int, once) -> float:
    """Run ``once() -> (seconds, keys answered new)`` ``repeat`` times; print and return the best keys/s."""
    rates = []
    for _ in range(repeat):
        secs, new = once()
        assert new == distinct, f"{label}: {new:,} keys answered new, {distinct:,} distinct keys"
        rates.append(total / secs)
    runs = " ".join(f"{r / 1e6:.2f}" for r in rates)
    print(f"{label:<40} {max(rates):14,.0f}   runs (M keys/s): {runs}", flush=True)
    return max(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--batch-keys", type=int, default=100_000)
    ap.add_argument("--repeat-rate", type=float, default=0.1, help="share of each batch repeating earlier keys")
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-callers", action="store_true", help="skip the 2-caller run")
    args = ap.parse_args()

    batches = make_batches(args.batches, args.batch_keys, args.repeat_rate)
    total = sum(len(b) for b in batches)
    distinct = len(np.unique(np.concatenate(batches)))
    print(f"key-state claims: {args.batches} batches x {args.batch_keys:,} uint64 keys = {total:,} keys, ")
    print(
        f"{distinct:,} distinct ({1 - distinct / total:.1%} repeats); {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}"
    )
    print(f"{'configuration':<40} {'keys/s (best)':>14}")

    def local(n: int):
        def once():
            state = KeyState.local(n)
            t0 = time.perf_counter()
            new = claim_all(state, batches)
            return time.perf_counter() - t0, new

        return once

    local1 = best_rate("in process, 1 bucket", args.repeat, total, distinct, local(1))
    best_rate(f"in process, {args.buckets} buckets", args.repeat, total, distinct, local(args.buckets))

    import ray

    t0 = time.perf_counter()
    ray.init(include_dashboard=False, logging_level="ERROR")
    print(f"(ray.init {time.perf_counter() - t0:.1f} s, not timed)")
    runs = [0]
    try:

        def on_ray():
            runs[0] += 1
            state = ray_key_state(args.buckets, f"bench-ks-{runs[0]}")  # actor start-up not timed
            try:
                state.claim(NAMESPACE + "-warm", batches[0][:10], "w", np.arange(10, dtype=np.uint64))
                t0 = time.perf_counter()
                new = claim_all(state, batches)
                return time.perf_counter() - t0, new
            finally:
                state.close()

        ray1 = best_rate(f"Ray, {args.buckets} buckets, 1 caller", args.repeat, total, distinct, on_ray)

        def two_callers():
            runs[0] += 1
            state = ray_key_state(args.buckets, f"bench-ks-{runs[0]}")
            caller = ray.remote(num_cpus=0)(Caller)
            half = len(batches) // 2
            callers = [caller.remote(state, batches[:half], 0), caller.remote(state, batches[half:], half)]
            try:
                ray.get([c.__ray_ready__.remote() for c in callers])
                state.claim(NAMESPACE + "-warm", batches[0][:10], "w", np.arange(10, dtype=np.uint64))
                t0 = time.perf_counter()
                new = sum(ray.get([c.run.remote() for c in callers]))
                return time.perf_counter() - t0, new
            finally:
                for c in callers:
                    ray.kill(c)
                state.close()

        if not args.skip_callers:
            best_rate(f"Ray, {args.buckets} buckets, 2 caller actors", args.repeat, total, distinct, two_callers)
    finally:
        ray.shutdown()

    print()
    print(f"Ray {args.buckets} buckets, 1 caller / in process 1 bucket = {ray1 / local1:.2f}x")
    verdict = "met" if ray1 >= TARGET else "NOT met"
    print(f"target Ray {args.buckets} buckets >= {TARGET:,} keys/s end to end: {ray1:,.0f} -> {verdict}")
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
