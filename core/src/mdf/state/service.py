"""The key-state service as deduplicators see it: requests split by bucket, one round trip per batch.

:class:`KeyState` routes: ``claim``/``collect`` by ``key % num_buckets``, ``lookup`` by ``position % num_buckets``,
a plugin's :meth:`KeyState.request` by the route it gives. It reaches its buckets through a :class:`Buckets`
transport: :class:`LocalBuckets` holds plain :class:`~mdf.state.bucket.StateBucket` objects in this process (the
inline executor's); an executor that keeps buckets elsewhere brings its own (Ray's bucket actors:
:mod:`mdf.executor.ray.buckets`), so this module knows no executor. A transport sends one batch's per-bucket
requests together (Ray submits them all before awaiting any, so a batch costs one round trip) and must pickle:
the driver hands the same KeyState to every stage replica.

The driver-side methods (``finalize``, ``snapshot``, ``restore``, ``stats``, ``forget_shards``) are called by
the executors between passes and when shards complete.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from mdf.state.bucket import StateBucket
from mdf.state.cluster import components
from mdf.state.types import StateType

KEYS_PER_BUCKET = 50_000_000  # the seed's guideline is 10-100 M keys a bucket; the middle of it


def auto_buckets(expected_keys: int | None, cluster_cpus: float = 1.0) -> int:
    """``num_buckets: auto``: one bucket per 50 M expected keys, at least one, at most one per CPU."""
    if not expected_keys:
        return 1
    return max(1, min(math.ceil(expected_keys / KEYS_PER_BUCKET), max(1, int(cluster_cpus))))


Call = tuple[int, str, tuple[Any, ...]]
"""``(bucket, method, arguments)``: one request to one bucket."""


class Buckets(Protocol):
    """How a :class:`KeyState` reaches its buckets (each a :class:`~mdf.state.bucket.StateBucket`, wherever it
    lives). Picklable: the state travels to every worker."""

    def __len__(self) -> int: ...

    def call(self, calls: Sequence[Call]) -> list[Any]:
        """Run every request (all in flight at once where the buckets are remote) and return their results."""

    def save(self, paths: list[str], completed: list[str]) -> None:
        """Snapshot bucket ``i`` into ``paths[i]``, a file of *this* process's machine (the driver's)."""

    def load(self, paths: list[str]) -> None:
        """Restore bucket ``i`` from ``paths[i]`` (the driver's file)."""

    def close(self) -> None:
        """Release the buckets (remote ones are stopped)."""


class LocalBuckets:
    """Buckets in this process. Several inline worker threads (and the checkpoint's snapshots) share them, so
    every batch of requests runs under one lock."""

    def __init__(self, num_buckets: int) -> None:
        self.items = [StateBucket(i) for i in range(num_buckets)]
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> StateBucket:
        return self.items[i]

    def __getstate__(self) -> dict[str, Any]:
        return {"items": self.items}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.items = state["items"]
        self._lock = threading.Lock()

    def call(self, calls: Sequence[Call]) -> list[Any]:
        with self._lock:
            return [getattr(self.items[i], method)(*args) for i, method, args in calls]

    def save(self, paths: list[str], completed: list[str]) -> None:
        self.call([(i, "snapshot", (p, completed)) for i, p in enumerate(paths)])

    def load(self, paths: list[str]) -> None:
        self.call([(i, "restore", (p,)) for i, p in enumerate(paths)])

    def close(self) -> None:
        pass


class KeyState:
    def __init__(self, buckets: Buckets) -> None:
        self.buckets = buckets
        self.phases: dict[str, str] = {}  # namespace -> "collect" | "keep" for cluster-mode operators
        self.run: dict[str, Any] = {}  # the run it serves (fingerprint, output), set by the checkpoint

    @classmethod
    def local(cls, num_buckets: int = 1) -> KeyState:
        """Buckets in this process (the inline executor's)."""
        return cls(LocalBuckets(num_buckets))

    # -- plumbing --------------------------------------------------------------------------------------------
    def _call(self, calls: list[Call]) -> list[Any]:
        return self.buckets.call(calls)

    def _broadcast(self, method: str, *args: Any) -> list[Any]:
        return self._call([(i, method, args) for i in range(len(self.buckets))])

    def _split(self, route: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """``(bucket, row indices)`` for every bucket that gets rows, indices in input order."""
        n = len(self.buckets)
        if n == 1:
            return [(0, np.arange(len(route)))]
        bucket = (route % np.uint64(n)).astype(np.int64)
        order = np.argsort(bucket, kind="stable")
        bounds = np.searchsorted(bucket[order], np.arange(n + 1))
        return [(b, order[bounds[b] : bounds[b + 1]]) for b in range(n) if bounds[b + 1] > bounds[b]]

    def _routed(
        self,
        method: str,
        namespace: str,
        route: np.ndarray,
        arrays: tuple[np.ndarray, ...],
        *extra: Any,
        state_type: type[StateType] | None = None,
    ) -> list[tuple[np.ndarray, Any]]:
        """Call ``method(namespace, *arrays, *extra)`` on each bucket, every array cut to the rows ``route``
        (``value % num_buckets``) sends there, all calls in flight at once; ``(row indices, result)`` each.
        With ``state_type``, the bucket's ``call`` runs ``method`` on that state type's instance instead."""
        parts = self._split(route)
        if state_type is None:
            calls = [(b, method, (namespace, *(_take(a, ix) for a in arrays), *extra)) for b, ix in parts]
        else:
            calls = [
                (b, "call", (state_type, namespace, method, *(_take(a, ix) for a in arrays), *extra)) for b, ix in parts
            ]
        results = self._call(calls)
        return [(ix, res) for (_, ix), res in zip(parts, results, strict=True)]

    # -- what operators call ---------------------------------------------------------------------------------
    def claim(self, namespace: str, keys: np.ndarray, shard: str, slots: np.ndarray) -> np.ndarray:
        """``new[i]``: ``keys[i]`` was not claimed by another claimant (``shard``, ``slots[i]``) before."""
        pieces = self._routed("claim", namespace, keys, (keys, slots), shard)
        return self.gather(pieces, np.zeros(len(keys), dtype=bool))

    def request(
        self,
        state_type: type[StateType],
        namespace: str,
        method: str,
        route: np.ndarray,
        arrays: tuple[np.ndarray, ...],
        *extra: Any,
    ) -> list[tuple[np.ndarray, Any]]:
        """Call ``state_type.method(*arrays, *extra)`` in every bucket that ``route % num_buckets`` sends rows to,
        each array cut to those rows (in input order), all buckets at once. Returns ``(row indices, result)`` per
        bucket; :meth:`gather` puts per-row results back in input order. ``namespace`` picks the instance (one
        per operator and state type, e.g. ``f"{op.namespace}/sigs"``)."""
        return self._routed(method, namespace, route, arrays, *extra, state_type=state_type)

    @staticmethod
    def gather(pieces: list[tuple[np.ndarray, Any]], out: np.ndarray) -> np.ndarray:
        """Write each bucket's per-row results into ``out`` at its row indices; return ``out``."""
        for ix, res in pieces:
            out[ix] = res
        return out

    def cluster(
        self, namespace: str, keys: np.ndarray, key_positions: np.ndarray, row_positions: np.ndarray
    ) -> np.ndarray | None:
        """Pass one (``collect``): record the keys, return ``None``. Pass two: the root of every row."""
        if self.phases.get(namespace, "collect") == "collect":
            self._routed("collect", namespace, keys, (keys, key_positions))
            return None
        pieces = self._routed("lookup", namespace, row_positions, (row_positions,))
        return self.gather(pieces, np.empty(len(row_positions), dtype=np.uint64))

    # -- what executors call ---------------------------------------------------------------------------------
    def finalize(self, namespace: str) -> dict[str, int]:
        """Between the passes: gather every bucket's edges, close them into clusters, hand out the roots."""
        edges = self._broadcast("edges", namespace)
        left = np.concatenate([e[0] for e in edges])
        right = np.concatenate([e[1] for e in edges])
        nodes, roots = components(left, right)
        self._routed("set_roots", namespace, nodes, (nodes, roots))
        self.phases[namespace] = "keep"
        return {"edges": len(left), "rows_in_clusters": len(nodes), "clusters": len(np.unique(roots))}

    def finish(self) -> dict[str, tuple[type[StateType], list[Any]]]:
        """The run succeeded: every bucket's plugin states :meth:`~mdf.state.types.StateType.finish`; their
        results by namespace, for :meth:`commit` (after the run's last snapshot: :meth:`Checkpoint.save`)."""
        by_namespace: dict[str, tuple[type[StateType], list[Any]]] = {}
        for finished in self._broadcast("finish", self.run):
            for ns, (state_type, result) in finished.items():
                by_namespace.setdefault(ns, (state_type, []))[1].append(result)
        return by_namespace

    def commit(self, finished: dict[str, tuple[type[StateType], list[Any]]]) -> None:
        """Each namespace's :meth:`~mdf.state.types.StateType.commit` here, with all its buckets' results."""
        for ns, (state_type, results) in finished.items():
            state_type.commit(ns, results, self.run)

    def forget_shards(self, shards: list[str]) -> None:
        self._broadcast("forget_shards", shards)

    def snapshot(self, directory: str, generation: int, completed: list[str]) -> list[str]:
        """One file per bucket in ``directory`` (the driver's): remote buckets send their bytes, one bucket at a
        time, and the driver writes them. A bucket on another machine writing the driver's path would write its
        own machine's disk, and the checkpoint (and its S3 mirror) would name files that are not there."""
        paths = [os.path.join(directory, f"bucket-{i}.{generation}.pkl") for i in range(len(self.buckets))]
        self.buckets.save(paths, completed)
        return paths

    def restore(self, paths: list[str]) -> None:
        if len(paths) != len(self.buckets):
            raise ValueError(f"snapshot has {len(paths)} buckets, this run {len(self.buckets)}")
        self.buckets.load(paths)

    def stats(self) -> dict[str, Any]:
        """Per namespace: keys, bytes, bytes per key, and the largest bucket."""
        merged: dict[str, Any] = {}
        for stats in self._broadcast("stats"):
            for ns, s in stats.items():
                m = merged.setdefault(ns, {"keys": 0, "bytes": 0, "buckets": len(self.buckets), "bucket_bytes": []})
                m["keys"] += s["keys"]
                m["bytes"] += s["bytes"]
                m["bucket_bytes"].append(s["bytes"])
        for m in merged.values():
            m["bytes_per_key"] = round(m["bytes"] / m["keys"], 2) if m["keys"] else 0.0
            m["max_bucket_bytes"] = max(m.pop("bucket_bytes"))
        return merged

    def close(self) -> None:
        self.buckets.close()


def _take(array: Any, ix: np.ndarray) -> Any:
    """``array``'s rows ``ix``: numpy by indexing, Arrow (e.g. strings, which numpy would hold as objects) by take."""
    return array.take(ix) if isinstance(array, pa.Array) else array[ix]
