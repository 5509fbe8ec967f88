"""The key-state service in process: claims, claimant idempotency, buckets, snapshots, cluster closing."""

from __future__ import annotations

import numpy as np
import pytest

from mdf.state import KeyState, StateBucket, StateType
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


class FirstValue(StateType):
    """A small state type as a plugin would write one: per key, the first value filed (idempotent)."""

    name = "test_first_value"

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}

    def file(self, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
        return np.array([self.seen.setdefault(k, v) for k, v in zip(keys.tolist(), values.tolist(), strict=True)])

    def stats(self) -> tuple[int, int]:
        return len(self.seen), 16 * len(self.seen)


def _file(s: KeyState, ns: str, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    pieces = s.request(FirstValue, ns, "file", keys, (keys, values))
    return s.gather(pieces, np.zeros(len(keys), dtype=np.int64))


@pytest.mark.parametrize("buckets", [1, 3])
def test_a_plugin_state_type_is_routed_kept_per_namespace_and_snapshotted(tmp_path, buckets):
    s = KeyState.local(buckets)
    keys = np.arange(10, dtype=np.uint64) % np.uint64(4)
    assert _file(s, "ns", keys, np.arange(10)).tolist() == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    assert _file(s, "other", u64(0), np.array([7])).tolist() == [7]  # one instance per namespace
    assert (s.stats()["ns"]["keys"], s.stats()["ns"]["bytes"]) == (4, 64)
    r = KeyState.local(buckets)
    r.restore(s.snapshot(str(tmp_path), 1, completed=[]))
    assert _file(r, "ns", u64(3, 9), np.array([50, 51])).tolist() == [3, 51]


def test_a_namespace_holds_one_state_type_and_only_public_methods_are_called():
    b = StateBucket()
    b.call(FirstValue, "ns", "file", u64(1), np.array([1]))

    class Other(FirstValue):
        name = "test_other"

    with pytest.raises(TypeError, match="holds a FirstValue, not a Other"):
        b.call(Other, "ns", "file", u64(1), np.array([1]))
    with pytest.raises(TypeError, match="only public methods"):
        b.call(FirstValue, "ns", "__init__")
    with pytest.raises(TypeError, match=r"not a mdf\.StateType"):
        b.call(dict, "fresh", "keys")  # type: ignore[arg-type]


def test_python_key_set_answers_as_the_native_one(monkeypatch):
    """Core runs without mdf-kernels: the fallback key set gives the same claims."""
    import mdf.state.bucket as bucket

    rng = np.random.default_rng(3)
    batches = [rng.integers(0, 300, size=200).astype(np.uint64) for _ in range(5)]
    native = KeyState.local(2)
    monkeypatch.setattr(bucket, "new_key_set", bucket._PySet)
    fallback = KeyState.local(2)
    for i, keys in enumerate(batches):
        slots = np.arange(i * 200, i * 200 + 200, dtype=np.uint64)
        assert np.array_equal(fallback.claim("ns", keys, "s", slots), native.claim("ns", keys, "s", slots))
    assert fallback.stats()["ns"]["keys"] == len(np.unique(np.concatenate(batches)))


class Finishing(StateType):
    """A state type that writes something when the run succeeds and records what it saw in ``seen``."""

    name = "test_finishing"
    seen: list[str] = []

    def __init__(self) -> None:
        self.finished = False

    def mark(self, keys: np.ndarray) -> np.ndarray:
        return np.zeros(len(keys), dtype=bool)

    def finish(self, run: dict) -> str:
        self.finished = True
        return "written"

    @classmethod
    def commit(cls, namespace: str, results: list, run: dict) -> None:
        cls.seen.append(f"commit {results}")


def test_the_last_snapshot_comes_between_finish_and_commit(tmp_path):
    """``Checkpoint.save``: every bucket's finish, then the run's last snapshot (holding the finished state, so
    what finish wrote need not be pickled as well, and a resume from it finds the buckets finished), then the
    commit. Red with the snapshot taken before finish (the snapshot's bucket unfinished): seen."""
    from mdf.state.checkpoint import Checkpoint

    Finishing.seen = []
    state = KeyState.local()
    state.request(Finishing, "ns", "mark", u64(1), (u64(1),))
    checkpoint = Checkpoint(str(tmp_path / "out"), state, 30.0, resume=False, fingerprint="f")
    checkpoint.shard_done("s0")
    checkpoint.save()
    assert Finishing.seen == ["commit ['written']"]
    restored = KeyState.local()
    resumed = Checkpoint(str(tmp_path / "out"), restored, 30.0, resume=True, fingerprint="f")
    assert resumed.load() == {"s0"}
    assert restored.buckets[0].custom["ns"].finished
