"""The state types of ``minhash_dedup(verify)``: first owner per band key, signatures per row, retries, buckets."""

from __future__ import annotations

import numpy as np
import pytest

from mdf import KeyState
from mdf_dedup.state import MAX_RUNS, BandOwners, Signatures, SortedRuns


def u64(*xs: int) -> np.ndarray:
    return np.array(xs, dtype=np.uint64)


def owners(s: KeyState, keys: np.ndarray, positions: np.ndarray) -> np.ndarray:
    pieces = s.request(BandOwners, "ns/bands", "owners", keys, (keys, positions))
    return s.gather(pieces, np.empty(len(keys), dtype=np.uint64))


@pytest.mark.parametrize("buckets", [1, 3])
def test_band_owner_is_the_first_position_and_a_retry_reads_the_same(buckets):
    s = KeyState.local(buckets)
    assert owners(s, u64(7, 8, 7, 9), u64(10, 10, 11, 12)).tolist() == [10, 10, 10, 12]  # first in batch wins
    assert owners(s, u64(9, 5), u64(20, 21)).tolist() == [12, 21]
    assert owners(s, u64(7, 8, 7, 9), u64(10, 10, 11, 12)).tolist() == [10, 10, 10, 12]  # retried batch
    assert s.stats()["ns/bands"]["keys"] == 4


def test_sorted_runs_agree_with_a_dict_across_merges():
    rng = np.random.default_rng(5)
    runs, reference = SortedRuns(2, np.int64), {}
    for _ in range(3 * MAX_RUNS):
        keys = rng.integers(0, 2_000, size=64).astype(np.uint64)
        rows = rng.integers(0, 1_000, size=(64, 2))
        held = runs.put(keys, rows)
        for k, r, h in zip(keys.tolist(), rows.tolist(), held.tolist(), strict=True):
            assert h == reference.setdefault(k, r)
    assert len(runs.runs) <= MAX_RUNS and len(runs) == len(reference)
    probe = np.arange(2_000, dtype=np.uint64)
    got, found = runs.get(probe)
    assert found.tolist() == [k in reference for k in range(2_000)]
    assert all(got[k].tolist() == reference[k] for k in reference)


def test_signatures_keep_the_first_row_and_report_misses(tmp_path):
    s = KeyState.local(2)
    sigs = np.arange(12, dtype=np.uint8).reshape(3, 4)
    s.request(Signatures, "ns/sigs", "put", u64(1, 2, 3), (u64(1, 2, 3), sigs))
    s.request(Signatures, "ns/sigs", "put", u64(2), (u64(2), np.full((1, 4), 99, np.uint8)))  # retry: kept first
    r = KeyState.local(2)
    r.restore(s.snapshot(str(tmp_path), 1, completed=[]))
    pos = u64(2, 4)
    pieces = r.request(Signatures, "ns/sigs", "get", pos, (pos,), 4)
    rows = r.gather([(ix, v) for ix, (v, _) in pieces], np.zeros((2, 4), np.uint8))
    found = r.gather([(ix, f) for ix, (_, f) in pieces], np.zeros(2, bool))
    assert rows.tolist() == [[4, 5, 6, 7], [0, 0, 0, 0]] and found.tolist() == [True, False]


def test_the_plugin_registers_what_minhash_dedup_declares():
    from mdf.plugins import load_plugins
    from mdf_dedup.ops.minhash import MinHashDedup

    registry = load_plugins().state_types
    assert all(registry.get(t.name) is t for t in MinHashDedup.state_types)
