"""The ``hamming_near_index`` state type through the key-state service: distance, order, retries, snapshots."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from mdf import NO_MATCH, KeyState
from mdf_image.state import NearIndexState, nearest


def _mih_keys(hashes: np.ndarray, max_distance: int) -> np.ndarray:
    from mdf_kernels import mih_block_keys

    return mih_block_keys(pa.array(hashes, pa.uint64()), max_distance).to_numpy(zero_copy_only=False)


def _hashes() -> np.ndarray:
    rng = np.random.default_rng(2)
    base = rng.integers(0, 2**63, size=50, dtype=np.int64).astype(np.uint64)
    flips = np.uint64(1) << rng.integers(0, 64, size=50).astype(np.uint64)
    return np.concatenate([base, base ^ flips])  # each second-half hash is 1 bit from a first-half one


@pytest.mark.parametrize("buckets", [1, 3])
def test_nearest_finds_the_first_earlier_hash_within_distance(buckets, tmp_path):
    hashes, pos = _hashes(), np.arange(100, dtype=np.uint64)
    s = KeyState.local(buckets)
    got = nearest(s, "img", _mih_keys(hashes, 3), hashes, pos, 3)
    assert (got[:50] == NO_MATCH).all()
    assert got[50:].tolist() == list(range(50))
    again = nearest(s, "img", _mih_keys(hashes[:50], 3), hashes[:50], pos[:50], 3)  # retried: same answers
    assert (again == NO_MATCH).all()
    assert s.stats()["img"]["keys"] == 400
    r = KeyState.local(buckets)  # a resumed run: the snapshot carries the index
    r.restore(s.snapshot(str(tmp_path), 1, completed=[]))
    far = hashes[:1] ^ np.uint64(0b1111)  # 4 bits from hash 0: beyond 3
    assert nearest(r, "img", _mih_keys(hashes[50:51], 3), hashes[50:51], u64(500), 3).tolist() == [0]
    assert (nearest(r, "img", _mih_keys(far, 3), far, u64(501), 3) == NO_MATCH).all()


def u64(*xs: int) -> np.ndarray:
    return np.array(xs, dtype=np.uint64)


def test_the_state_type_is_registered_by_the_plugin():
    from mdf.plugins import load_plugins

    assert load_plugins().state_types.get(NearIndexState.name) is NearIndexState
