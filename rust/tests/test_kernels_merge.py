"""``merge_sorted_runs`` (the merge ``mdf index compact`` does over sorted generation files) and
``sort_unique_pairs`` (the one sort a dedup index's ``update`` run does after it has succeeded): each key once,
with its first value, as a stable sort gives them."""

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
    """The reference: a stable argsort of every run's keys, the first of each key."""
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
    ("high", "shift"),
    [(2**64 - 1, 0), (50_000, 46), (50_000, 0), (7, 0)],
    ids=["hashes", "repeats-spread", "repeats-small", "few-keys"],
)
@pytest.mark.parametrize("wide", [True, False], ids=["uint64", "uint32"])
def test_sort_equals_a_stable_sort_of_the_chunks(high, shift, wide):
    """300 K unsorted keys in 30 chunks, with repeats within and across chunks: the stable sort's keys and each
    key's first value. Red (repeats, few keys) with ``sort_unstable_by_key`` in the parts (a later value won):
    seen. Small keys (``repeats-small``, ``few-keys``) all fall into one part: slower, still equal."""
    rng = np.random.default_rng(5)
    keys = [rng.integers(0, high, 10_000, dtype=np.uint64) << np.uint64(shift) for _ in range(30)]
    values = [rng.integers(0, 1 << 32, 10_000, dtype=np.uint64) for _ in range(30)]
    if not wide:
        values = [v.astype(np.uint32) for v in values]
    got_keys, got_values = mk.sort_unique_pairs(pa.chunked_array(keys), pa.chunked_array(values))
    want_keys, want_values = _numpy(keys, values)
    assert got_keys.type == pa.uint64() and got_values.type == (pa.uint64() if wide else pa.uint32())
    assert np.array_equal(got_keys.to_numpy(), want_keys)
    assert np.array_equal(got_values.to_numpy(), want_values)


def test_sort_of_nothing_and_of_one_array():
    empty = pa.chunked_array([], pa.uint64())
    k, v = mk.sort_unique_pairs(empty, empty)
    assert len(k) == len(v) == 0
    k, v = mk.sort_unique_pairs(pa.array([2, 1, 2], pa.uint64()), pa.array([5, 6, 7], pa.uint64()))
    assert k.to_pylist() == [1, 2] and v.to_pylist() == [6, 5]


BOTH = [mk.merge_sorted_runs, mk.sort_unique_pairs]


@pytest.mark.parametrize(
    ("kernels", "keys", "values", "error", "message"),
    [
        (BOTH[:1], [[3, 1]], [[0, 0]], ValueError, "keys chunk 0 is not sorted"),
        (BOTH, [[1, 2]], [[0]], ValueError, "same lengths"),
        (BOTH, [[1, None]], [[0, 0]], ValueError, "keys contains nulls"),
        (BOTH, [[1, 2]], [[0, None]], ValueError, "values contains nulls"),
    ],
)
def test_bad_input_is_one_clear_error(kernels, keys, values, error, message):
    k = pa.chunked_array([pa.array(c, pa.uint64()) for c in keys])
    v = pa.chunked_array([pa.array(c, pa.uint64()) for c in values])
    for kernel in kernels:
        with pytest.raises(error, match=message):
            kernel(k, v)


@pytest.mark.parametrize("kernel", BOTH)
def test_signed_keys_are_refused(kernel):
    with pytest.raises(TypeError, match="expected uint64"):
        kernel(pa.array([1], pa.int64()), pa.array([1], pa.uint64()))
