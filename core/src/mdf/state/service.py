"""The key-state service as deduplicators see it: requests split by bucket, one round trip per batch.

:class:`KeyState` holds the buckets (plain :class:`~mdf.state.bucket.StateBucket` objects inline, Ray actor
handles on Ray) and routes: ``claim``/``collect`` by ``key % num_buckets``, ``lookup`` by
``position % num_buckets``, a plugin's :meth:`KeyState.request` by the route it gives. On Ray the per-bucket
requests of one batch are all submitted before any is awaited, so they run in parallel and a batch costs one
round trip. The object is small and picklable, so the driver hands the same one to every stage replica. On Ray it
travels as the buckets' actor names, not their handles: a handle inside an actor's constructor arguments counts
as an argument in the object store, which Ray warns about (its issue 53727: such an actor cannot be restarted
once the argument is gone) on every run with ``max_restarts > 0``; a name is looked up again wherever it lands.

The driver-side methods (``finalize``, ``snapshot``, ``restore``, ``stats``, ``forget_shards``) are called by
the executors between passes and when shards complete.
"""

from __future__ import annotations

import math
import os
import threading
from typing import Any

import numpy as np
import pyarrow as pa

from mdf.state.bucket import StateBucket, write_atomically
from mdf.state.cluster import components
from mdf.state.types import StateType

KEYS_PER_BUCKET = 50_000_000  # the seed's guideline is 10-100 M keys a bucket; the middle of it


def auto_buckets(expected_keys: int | None, cluster_cpus: float = 1.0) -> int:
    """``num_buckets: auto``: one bucket per 50 M expected keys, at least one, at most one per CPU."""
    if not expected_keys:
        return 1
    return max(1, min(math.ceil(expected_keys / KEYS_PER_BUCKET), max(1, int(cluster_cpus))))


class KeyState:
    def __init__(self, buckets: list[Any], remote: bool = False, names: list[str] | None = None) -> None:
        self.buckets = buckets
        self.remote = remote
        self.names = names  # the bucket actors' names on Ray: what a pickled KeyState carries instead of handles
        self.phases: dict[str, str] = {}  # namespace -> "collect" | "keep" for cluster-mode operators
        self.run: dict[str, Any] = {}  # the run it serves (fingerprint, output), set by the checkpoint
        # in process, several inline worker threads (and the checkpoint's snapshots) share the buckets
        self._lock = None if remote else threading.Lock()

    @classmethod
    def local(cls, num_buckets: int = 1) -> KeyState:
        return cls([StateBucket(i) for i in range(num_buckets)])

    @classmethod
    def on_ray(cls, num_buckets: int, name_prefix: str) -> KeyState:
        """One actor per bucket. ``max_restarts=0``: a restarted bucket would be empty, so a dead bucket fails
        the run, which a resume then continues from the last snapshot."""
        import ray

        actor = ray.remote(StateBucket)
        opts = {"num_cpus": 0, "max_restarts": 0}
        handles = [actor.options(name=f"{name_prefix}-bucket-{i}", **opts).remote(i) for i in range(num_buckets)]
        ray.get([h.__ray_ready__.remote() for h in handles])
        return cls(handles, remote=True, names=[f"{name_prefix}-bucket-{i}" for i in range(num_buckets)])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self.remote and self.names is not None:
            state["buckets"] = None  # looked up by name where it is unpickled (see the module docstring)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.buckets is None:
            import ray

            self.buckets = [ray.get_actor(name) for name in self.names or []]

    # -- plumbing --------------------------------------------------------------------------------------------
    def _call(self, calls: list[tuple[int, str, tuple[Any, ...]]]) -> list[Any]:
        if self._lock is not None:
            with self._lock:
                return [getattr(self.buckets[i], method)(*args) for i, method, args in calls]
        import ray

        return ray.get([getattr(self.buckets[i], method).remote(*args) for i, method, args in calls])

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
        """One file per bucket in ``directory`` (the driver's). Bucket actors send their bytes, one bucket at a
        time, and the driver writes them: an actor on another machine writing the driver's path would write
        its own machine's disk, and the checkpoint (and its S3 mirror) would name files that are not there."""
        paths = [os.path.join(directory, f"bucket-{i}.{generation}.pkl") for i in range(len(self.buckets))]
        if not self.remote:
            self._call([(i, "snapshot", (p, completed)) for i, p in enumerate(paths)])
            return paths
        import ray

        for bucket, path in zip(self.buckets, paths, strict=True):  # one bucket's bytes in memory at a time
            write_atomically(path, ray.get(bucket.dump.remote(completed)))
        return paths

    def restore(self, paths: list[str]) -> None:
        if len(paths) != len(self.buckets):
            raise ValueError(f"snapshot has {len(paths)} buckets, this run {len(self.buckets)}")
        if not self.remote:
            self._call([(i, "restore", (p,)) for i, p in enumerate(paths)])
            return
        import ray

        for bucket, path in zip(self.buckets, paths, strict=True):  # read here: the driver's files
            with open(path, "rb") as f:
                ray.get(bucket.load.remote(f.read()))

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
        if self.remote:
            import ray

            for h in self.buckets:
                ray.kill(h, no_restart=True)


def _take(array: Any, ix: np.ndarray) -> Any:
    """``array``'s rows ``ix``: numpy by indexing, Arrow (e.g. strings, which numpy would hold as objects) by take."""
    return array.take(ix) if isinstance(array, pa.Array) else array[ix]
