"""Key-state service used by deduplicators: "has any earlier row claimed this key?".

This is the in-process form used by the inline executor: one key set per deduplicating operator. It uses
``mdf_kernels.KeySet`` (a native hash set, ~16 bytes a key) when the kernels are installed and a Python set
otherwise. The sharded, idempotent-per-claimant service for Ray runs builds on the same ``claim`` contract.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


class _PySet:
    """Fallback key set; keeps the first occurrence of each key within and across batches."""

    def __init__(self) -> None:
        self._seen: set[int] = set()

    def insert_new(self, keys: pa.Array) -> pa.BooleanArray:
        values = keys.to_numpy(zero_copy_only=False)
        _, first = np.unique(values, return_index=True)
        in_batch_first = np.zeros(len(values), dtype=bool)
        in_batch_first[first] = True
        seen = self._seen
        unseen = np.fromiter((v not in seen for v in values.tolist()), dtype=bool, count=len(values))
        new = in_batch_first & unseen
        seen.update(values[new].tolist())
        return pa.array(new)

    def __len__(self) -> int:
        return len(self._seen)


def new_key_set() -> Any:
    try:
        from mdf_kernels import KeySet
    except ImportError:
        return _PySet()
    return KeySet()


class InProcessKeyState:
    """One key set per operator name. ``claim`` returns True for rows whose key no earlier row had."""

    def __init__(self) -> None:
        self._sets: dict[str, Any] = {}

    def claim(self, namespace: str, keys: pa.Array, ctx: Any = None) -> pa.BooleanArray:
        key_set = self._sets.get(namespace)
        if key_set is None:
            key_set = self._sets[namespace] = new_key_set()
        if isinstance(keys, pa.ChunkedArray):
            keys = keys.combine_chunks()
        if keys.null_count:
            valid = pc.is_valid(keys)
            result = key_set.insert_new(keys.filter(valid)).to_numpy(zero_copy_only=False)
            out = np.ones(len(keys), dtype=bool)
            out[valid.to_numpy(zero_copy_only=False)] = result
            return pa.array(out)
        return key_set.insert_new(keys.cast(pa.uint64()))

    def key_counts(self) -> dict[str, int]:
        return {name: len(s) for name, s in self._sets.items()}


class KeyStateService:
    """The key state behind a Ray actor (one bucket for now; the dedup service shards it by key)."""

    def __init__(self) -> None:
        self.state = InProcessKeyState()

    def claim(self, namespace: str, keys: pa.Array, ctx: Any = None) -> pa.BooleanArray:
        return self.state.claim(namespace, keys, ctx)

    def key_counts(self) -> dict[str, int]:
        return self.state.key_counts()


class RemoteKeyState:
    """What a stage actor's deduplicator talks to: ``claim`` is one round trip to the service actor."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def claim(self, namespace: str, keys: pa.Array, ctx: Any = None) -> pa.BooleanArray:
        import ray

        return ray.get(self.handle.claim.remote(namespace, keys, ctx))
