"""The key-state service in process: claims, claimant idempotency, buckets, snapshots, cluster closing."""

from __future__ import annotations

import numpy as np
import pytest

from mdf.state import KeyState, StateBucket
from mdf.state.cluster import _union_find_numpy, components, key_edges, positions


def u64(*xs: int) -> np.ndarray:
    return np.array(xs, dtype=np.uint64)


def test_first_slot_of_a_key_wins_within_and_across_batches():
    s = KeyState.local()
    assert s.claim("ns", u64(1, 2, 1, 3), "a", u64(0, 1, 2, 3)).tolist() == [True, True, False, True]
    assert s.claim("ns", u64(3, 4), "a", u64(4, 5)).tolist() == [False, True]
    assert s.claim("other", u64(3), "a", u64(0)).tolist() == [True]  # namespaces are separate key sets


def test_claim_is_idempotent_per_claimant_and_only_for_it():
    s = KeyState.local()
    first = s.claim("ns", u64(10, 11, 10), "shard-a", u64(0, 1, 2))
    again = s.claim("ns", u64(10, 11, 10), "shard-a", u64(0, 1, 2))  # the same batch retried
    assert first.tolist() == again.tolist() == [True, True, False]
    assert s.claim("ns", u64(10, 11), "shard-b", u64(0, 1)).tolist() == [False, False]  # another shard
    assert s.claim("ns", u64(10), "shard-a", u64(5)).tolist() == [False]  # another row of the same shard


def test_forgotten_shard_is_no_longer_a_claimant():
    s = KeyState.local()
    s.claim("ns", u64(7), "a", u64(0))
    s.forget_shards(["a"])
    assert s.claim("ns", u64(7), "a", u64(0)).tolist() == [False]


@pytest.mark.parametrize("buckets", [2, 3, 8])
def test_buckets_answer_as_one_bucket(buckets):
    rng = np.random.default_rng(0)
    one, many = KeyState.local(1), KeyState.local(buckets)
    for batch in range(20):
        keys = rng.integers(0, 500, size=200).astype(np.uint64)
        slots = np.arange(batch * 200, batch * 200 + 200, dtype=np.uint64)
        shard = f"s{batch % 3}"
        expected = one.claim("ns", keys, shard, slots)
        assert np.array_equal(many.claim("ns", keys, shard, slots), expected)
        if batch % 4 == 0:  # a retry answers the same on both
            assert np.array_equal(many.claim("ns", keys, shard, slots), expected)
    assert one.stats()["ns"]["keys"] == many.stats()["ns"]["keys"] == len(np.unique(_all_keys(20)))


def _all_keys(batches: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([rng.integers(0, 500, size=200) for _ in range(batches)])


def test_snapshot_restore_keeps_keys_and_claimant_bits(tmp_path):
    s = KeyState.local(2)
    s.claim("ns", u64(1, 2, 3), "done", u64(0, 1, 2))
    s.claim("ns", u64(4, 5), "open", u64(0, 1))
    paths = s.snapshot(str(tmp_path), 1, completed=["done"])
    r = KeyState.local(2)
    r.restore(paths)
    assert r.claim("ns", u64(4, 5, 6), "open", u64(0, 1, 2)).tolist() == [True, True, True]  # its own claims
    assert r.claim("ns", u64(1, 2), "done", u64(0, 1)).tolist() == [False, False]  # completed: forgotten
    assert r.stats()["ns"]["keys"] == 6
    with pytest.raises(ValueError, match="snapshot has 2 buckets, this run 3"):
        KeyState.local(3).restore(paths)


def test_stats_report_bytes_per_key():
    s = KeyState.local()
    s.claim("ns", np.arange(1, 10_001, dtype=np.uint64), "a", np.arange(10_000, dtype=np.uint64))
    st = s.stats()["ns"]
    assert st["keys"] == 10_000 and st["bytes"] > 0 and st["bytes_per_key"] == round(st["bytes"] / 10_000, 2)


def test_key_edges_link_each_extra_occurrence_to_the_first_position():
    left, right = key_edges(u64(5, 9, 5, 5, 7), u64(30, 10, 20, 40, 50))
    assert sorted(zip(left.tolist(), right.tolist(), strict=True)) == [(20, 30), (20, 40)]


def test_components_close_transitively_and_root_at_the_smallest():
    nodes, roots = components(u64(1, 3, 10), u64(3, 7, 11))
    assert dict(zip(nodes.tolist(), roots.tolist(), strict=True)) == {1: 1, 3: 1, 7: 1, 10: 10, 11: 10}


def test_numpy_union_find_matches_a_reference():
    rng = np.random.default_rng(1)
    n = 300
    left, right = rng.integers(0, n, 200), rng.integers(0, n, 200)
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in zip(left.tolist(), right.tolist(), strict=True):
        ra, rb = find(a), find(b)
        parent[max(ra, rb)] = min(ra, rb)
    expected = [min(i for i in range(n) if find(i) == find(x)) for x in range(n)]
    assert _union_find_numpy(left, right, n).tolist() == expected


def test_cluster_passes_keep_the_smallest_position_per_cluster():
    s = KeyState.local(3)
    rows = positions(shard_index=1, row_offset=0, n=4)
    # rows 0-1 share key 100, rows 1-2 share key 200 (so 0, 1, 2 are one cluster); row 3 is alone
    keys, key_rows = u64(100, 100, 200, 200, 300), rows[[0, 1, 1, 2, 3]]
    assert s.cluster("ns", keys, key_rows, rows) is None
    info = s.finalize("ns")
    assert info == {"edges": 2, "rows_in_clusters": 3, "clusters": 1}
    assert s.cluster("ns", keys, key_rows, rows).tolist() == [rows[0]] * 3 + [rows[3]]
    assert positions(2, 0, 1)[0] > positions(1, 10**9, 1)[0]  # shard order first, then rows


def test_bucket_is_a_plain_class_with_its_own_stats():
    b = StateBucket(3)
    b.claim("x", u64(1, 2), u64(0, 1), "s")
    assert b.stats()["x"]["keys"] == 2


def _mih_keys(hashes: np.ndarray, blocks: int) -> np.ndarray:
    """Block keys for the test (the image plugin uses mdf_kernels.mih_block_keys): block index in the top byte."""
    width = 64 // blocks
    mask = np.uint64((1 << width) - 1)
    out = [((hashes >> np.uint64(b * width)) & mask) | np.uint64(b << 56) for b in range(blocks)]
    return np.stack(out, axis=1).reshape(-1)


@pytest.mark.parametrize("buckets", [1, 3])
def test_nearest_finds_the_first_earlier_hash_within_distance(buckets):
    pytest.importorskip("mdf_kernels")
    rng = np.random.default_rng(2)
    base = rng.integers(0, 2**63, size=50, dtype=np.int64).astype(np.uint64)
    flips = np.uint64(1) << rng.integers(0, 64, size=50).astype(np.uint64)
    hashes = np.concatenate([base, base ^ flips])  # each second-half hash is 1 bit from a first-half one
    pos = np.arange(100, dtype=np.uint64)
    s = KeyState.local(buckets)
    got = s.nearest("img", _mih_keys(hashes, 4), hashes, pos, 3)
    none = np.iinfo(np.uint64).max
    assert got[:50].tolist() == [none] * 50
    assert got[50:].tolist() == list(range(50))
    again = s.nearest("img", _mih_keys(hashes[:50], 4), hashes[:50], pos[:50], 3)  # retried: same answers
    assert again.tolist() == [none] * 50
    assert s.stats()["img"]["keys"] == 400
