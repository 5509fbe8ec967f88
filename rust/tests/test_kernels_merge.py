"""``merge_sorted_runs``: the merge a dedup index's ``update`` run does after it has succeeded."""

import numpy as np
import pyarrow as pa
import pytest

import mdf_kernels as mk


def _runs(seed: int, count: int, size: int, spread: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    keys = [np.sort(rng.integers(0, spread, size, dtype=np.uint64)) for _ in range(count)]
    values = [rng.integers(0, 1 << 32, size, dtype=np.uint64) for _ in range(count)]
    return keys, values


def _numpy(keys: list[np.ndarray], values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """What the index did before the kernel: a stable argsort of the runs, the first of each key."""
    k = np.concatenate(keys)
    order = np.argsort(k, kind="stable")
    k = k[order]
    first = np.ones(len(k), dtype=bool)
    first[1:] = k[1:] != k[:-1]
    return k[first], np.concatenate(values)[order][first]


@pytest.mark.parametrize("spread", [2**64 - 1, 50_000, 7], ids=["hashes", "repeats", "few-keys"])
@pytest.mark.parametrize("wide", [True, False], ids=["uint64", "uint32"])
def test_equals_a_stable_sort_of_the_runs(spread, wide):
    """300 K keys in 30 runs: several key ranges merged in parallel give the stable sort's keys and values. Red
    (repeats, few keys) with the kernel keeping a key's last value instead of its first: seen."""
    keys, values = _runs(3, 30, 10_000, spread)
    if not wide:
        values = [v.astype(np.uint32) for v in values]
    got_keys, got_values = mk.merge_sorted_runs(pa.chunked_array(keys), pa.chunked_array(values))
    want_keys, want_values = _numpy(keys, values)
    assert got_keys.type == pa.uint64() and got_values.type == pa.uint64()
    assert np.array_equal(got_keys.to_numpy(), want_keys)
    assert np.array_equal(got_values.to_numpy(), want_values)


def test_empty_runs_and_one_array():
    empty = pa.chunked_array([], pa.uint64())
    k, v = mk.merge_sorted_runs(empty, empty)
    assert len(k) == len(v) == 0
    k, v = mk.merge_sorted_runs(pa.array([1, 1, 2], pa.uint64()), pa.array([5, 6, 7], pa.uint64()))
    assert k.to_pylist() == [1, 2] and v.to_pylist() == [5, 7]


@pytest.mark.parametrize(
    ("keys", "values", "error", "message"),
    [
        ([[3, 1]], [[0, 0]], ValueError, "keys chunk 0 is not sorted"),
        ([[1, 2]], [[0]], ValueError, "same lengths"),
        ([[1, None]], [[0, 0]], ValueError, "keys contains nulls"),
    ],
)
def test_bad_runs_are_one_clear_error(keys, values, error, message):
    k = pa.chunked_array([pa.array(c, pa.uint64()) for c in keys])
    v = pa.chunked_array([pa.array(c, pa.uint64()) for c in values])
    with pytest.raises(error, match=message):
        mk.merge_sorted_runs(k, v)


def test_signed_keys_are_refused():
    with pytest.raises(TypeError, match="expected uint64"):
        mk.merge_sorted_runs(pa.array([1], pa.int64()), pa.array([1], pa.uint64()))
