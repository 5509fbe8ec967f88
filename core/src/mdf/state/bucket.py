"""One bucket of the key-state service: the keys whose ``key % num_buckets`` is this bucket's index.

A bucket answers three kinds of request, each for a *namespace* (one deduplicating operator):

* ``claim`` (streaming dedup): is this key new? Keys live in an ``mdf_kernels.KeySet`` (~15 bytes a key).
  Claims are **idempotent per claimant**: a claimant is a slot of an input shard (row, or row x band), and the
  bucket remembers, for every shard not yet completed, one bit per slot it answered "new". A claimant that asks
  again (a batch retried after a crash, a shard re-run after a resume) gets "new" again for exactly the keys it
  claimed the first time, so its rows are neither lost nor kept twice. :meth:`forget_shards` drops the bits of
  shards whose output is committed; they are never retried.
* ``collect`` / ``edges`` / ``set_roots`` / ``lookup`` (cluster dedup): pass one records ``(key, position)``
  pairs; the driver turns them into clusters (:mod:`mdf.state.cluster`); pass two asks which positions survive.
* ``call``: a method of a plugin's state type (:mod:`mdf.state.types`, e.g. a plugin's near-duplicate index),
  one instance per namespace; the bucket knows nothing of what it holds beyond ``stats`` and pickling.
* ``snapshot`` / ``restore``: the whole bucket as one file, so a resumed run keeps what it had seen.

It is a plain class: the inline executor calls it directly and the Ray executor runs one actor per bucket.
"""

from __future__ import annotations

import os
import pickle
from typing import Any

import numpy as np
import pyarrow as pa

from mdf.arrowpy import as_numpy
from mdf.pandas_probe import defer_pandas
from mdf.state.types import StateType


def new_key_set() -> Any:
    """The native key set when mdf-kernels is installed, else a (slower, larger) Python fallback."""
    try:
        from mdf_kernels import KeySet
    except ImportError:
        return _PySet()
    return KeySet()


class _PySet:
    """Fallback key set with KeySet's ``insert_new`` contract (first occurrence in the batch wins)."""

    def __init__(self) -> None:
        self._seen: set[int] = set()

    def insert_new(self, keys: pa.Array) -> pa.BooleanArray:
        values = as_numpy(keys)
        _, first = np.unique(values, return_index=True)
        new = np.zeros(len(values), dtype=bool)
        new[first] = True
        seen = self._seen
        new &= np.fromiter((v not in seen for v in values.tolist()), dtype=bool, count=len(values))
        seen.update(values[new].tolist())
        return pa.array(new)

    def __len__(self) -> int:
        return len(self._seen)

    def memory_bytes(self) -> int:
        return 72 * len(self._seen)  # CPython: set slot + int object, roughly


class _Memo:
    """One bit per claimant slot of one shard: set when this bucket answered "new" to that slot."""

    __slots__ = ("bits",)

    def __init__(self) -> None:
        self.bits = np.zeros(0, dtype=np.uint8)

    def get(self, slots: np.ndarray) -> np.ndarray:
        out = np.zeros(len(slots), dtype=bool)
        inside = (slots >> 3) < len(self.bits)
        s = slots[inside]
        out[inside] = (self.bits[s >> 3] >> (s & 7).astype(np.uint8)) & 1
        return out

    def set(self, slots: np.ndarray) -> None:
        if not len(slots):
            return
        need = int(slots.max() >> 3) + 1
        if need > len(self.bits):
            grown = np.zeros(max(need, 2 * len(self.bits)), dtype=np.uint8)
            grown[: len(self.bits)] = self.bits
            self.bits = grown
        np.bitwise_or.at(self.bits, slots >> 3, np.left_shift(1, slots & 7).astype(np.uint8))


class StateBucket:
    def __init__(self, index: int = 0) -> None:
        defer_pandas()  # a Ray actor's process: see mdf.pandas_probe
        self.index = index
        self.sets: dict[str, Any] = {}
        self.memos: dict[str, dict[str, _Memo]] = {}
        self.collected: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        self.roots: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.custom: dict[str, StateType] = {}  # namespace -> a plugin's state (see mdf.state.types)

    # -- streaming ----------------------------------------------------------------------------------------
    def claim(self, namespace: str, keys: np.ndarray, slots: np.ndarray, shard: str) -> np.ndarray:
        """``new[i]``: no other claimant holds ``keys[i]`` (the first slot of a repeated key wins)."""
        key_set = self.sets.get(namespace)
        if key_set is None:
            key_set = self.sets[namespace] = new_key_set()
        new = as_numpy(key_set.insert_new(pa.array(keys, type=pa.uint64()))).copy()
        memo = self.memos.setdefault(namespace, {}).setdefault(shard, _Memo())
        if not new.all():
            new |= memo.get(slots)
        memo.set(slots[new])
        return new

    def forget_shards(self, shards: list[str]) -> None:
        for memos in self.memos.values():
            for shard in shards:
                memos.pop(shard, None)

    # -- plugin state types ---------------------------------------------------------------------------------
    def call(self, state_type: type[StateType], namespace: str, method: str, *args: Any) -> Any:
        """``method(*args)`` on this bucket's ``state_type`` instance for ``namespace`` (made on first use)."""
        state = self.custom.get(namespace)
        if state is None:
            if not (isinstance(state_type, type) and issubclass(state_type, StateType)):
                raise TypeError(f"{state_type!r} is not a mdf.StateType subclass")
            state = self.custom[namespace] = state_type()
        elif type(state) is not state_type:
            raise TypeError(
                f"namespace '{namespace}' holds a {type(state).__name__}, not a {state_type.__name__}; "
                "use one namespace per state type"
            )
        if method.startswith("_"):
            raise TypeError(f"{state_type.__name__}.{method}: only public methods of a state type can be called")
        return getattr(state, method)(*args)

    def finish(self, run: dict[str, Any]) -> dict[str, tuple[type[StateType], Any]]:
        """The run succeeded: each plugin state's :meth:`~mdf.state.types.StateType.finish`, by namespace."""
        return {ns: (type(state), state.finish(run)) for ns, state in self.custom.items()}

    # -- cluster --------------------------------------------------------------------------------------------
    def collect(self, namespace: str, keys: np.ndarray, positions: np.ndarray) -> None:
        self.collected.setdefault(namespace, []).append((keys, positions))

    def edges(self, namespace: str) -> tuple[np.ndarray, np.ndarray]:
        """For every key seen at two or more positions: an edge from its smallest position to each other one."""
        from mdf.state.cluster import key_edges

        parts = self.collected.pop(namespace, [])
        if not parts:
            empty = np.zeros(0, dtype=np.uint64)
            return empty, empty
        keys = np.concatenate([k for k, _ in parts])
        positions = np.concatenate([p for _, p in parts])
        return key_edges(keys, positions)

    def set_roots(self, namespace: str, positions: np.ndarray, roots: np.ndarray) -> None:
        order = np.argsort(positions, kind="stable")
        self.roots[namespace] = (positions[order], roots[order])

    def lookup(self, namespace: str, positions: np.ndarray) -> np.ndarray:
        """The cluster root of every position (itself when it shares no key with another row)."""
        known, roots = self.roots.get(namespace, (np.zeros(0, np.uint64), np.zeros(0, np.uint64)))
        out = positions.copy()
        if len(known):
            at = np.minimum(np.searchsorted(known, positions), len(known) - 1)
            hit = known[at] == positions
            out[hit] = roots[at[hit]]
        return out

    # -- persistence and stats ------------------------------------------------------------------------------
    def snapshot(self, path: str, completed: list[str]) -> int:
        """Forget ``completed`` shards, then write the bucket to ``path`` atomically; return bytes written.

        Pickled straight into the file: pickle writes each large array's bytes to it as they are, where
        ``dump`` builds the whole bucket as one bytes object first. Measured on a 76 MB bucket (a dedup index's
        pending keys): 0.03-0.07 s against 0.1-0.26 s for ``dump`` and a write."""
        tmp = f"{path}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump(self._state(completed), f, protocol=5)
        os.replace(tmp, path)
        return os.path.getsize(path)

    def dump(self, completed: list[str]) -> bytes:
        """Forget ``completed`` shards, then the bucket as bytes: what a bucket actor sends the driver, which
        writes the snapshot file (an actor on another machine cannot see the driver's folders)."""
        return pickle.dumps(self._state(completed), protocol=5)

    def _state(self, completed: list[str]) -> dict[str, Any]:
        self.forget_shards(completed)
        return {
            "index": self.index,
            "sets": self.sets,
            "custom": self.custom,
            "memos": {ns: {s: m.bits for s, m in memos.items()} for ns, memos in self.memos.items()},
        }

    def restore(self, path: str) -> None:
        with open(path, "rb") as f:
            self._apply(pickle.load(f))  # our own file, written by snapshot() above

    def load(self, blob: bytes) -> None:
        """The bucket as :meth:`dump` gave it (a snapshot file's bytes, read by the driver on Ray)."""
        self._apply(pickle.loads(blob))  # our own bytes, written by dump() above

    def _apply(self, state: dict[str, Any]) -> None:
        self.index = state["index"]
        self.sets = state["sets"]
        self.custom = state.get("custom", {})
        self.memos = {}
        for ns, memos in state["memos"].items():
            for shard, bits in memos.items():
                memo = self.memos.setdefault(ns, {}).setdefault(shard, _Memo())
                memo.bits = bits

    def stats(self) -> dict[str, dict[str, int]]:
        """Keys and bytes per namespace (key set plus the claimant bits of shards in progress)."""
        out = {}
        for ns, key_set in self.sets.items():
            memo_bytes = sum(m.bits.nbytes for m in self.memos.get(ns, {}).values())
            out[ns] = {"keys": len(key_set), "bytes": int(key_set.memory_bytes()) + memo_bytes}
        for ns, state in self.custom.items():
            items, nbytes = state.stats()
            out[ns] = {"keys": int(items), "bytes": int(nbytes)}
        return out


def write_atomically(path: str, blob: bytes) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)
