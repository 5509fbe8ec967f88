import random

import pyarrow as pa
import pytest

import mdf_kernels as mk


def reference_components(n, edges):
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return [find(i) for i in range(n)]


@pytest.mark.parametrize("type_", [pa.uint64(), pa.int64(), pa.int32(), pa.uint32()])
def test_matches_python_union_find(type_):
    rng = random.Random(11)
    n = 2000
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(1500)]
    left = pa.array([a for a, _ in edges], type_)
    right = pa.array([b for _, b in edges], type_)
    got = mk.union_find(left, right, num_nodes=n)
    assert got.type == pa.uint64()
    assert got.to_pylist() == reference_components(n, edges)


def test_id_is_smallest_member_and_order_independent():
    left, right = [5, 1, 3, 6], [1, 2, 4, 6]
    want = [0, 1, 1, 3, 3, 1, 6]
    assert mk.union_find(pa.array(left), pa.array(right), 7).to_pylist() == want
    assert mk.union_find(pa.array(right[::-1]), pa.array(left[::-1]), 7).to_pylist() == want


def test_default_num_nodes_sliced_and_chunked():
    left = pa.array([9, 0, 1, 2], pa.uint64()).slice(1)
    right = pa.chunked_array([pa.array([1], pa.uint64()), pa.array([2, 4], pa.uint64())])
    assert mk.union_find(left, right).to_pylist() == [0, 0, 0, 3, 0]
    assert mk.union_find(pa.array([], pa.int64()), pa.array([], pa.int64())).to_pylist() == []


def test_errors():
    with pytest.raises(ValueError, match="union_find: left and right must have the same length"):
        mk.union_find(pa.array([0, 1]), pa.array([1]))
    with pytest.raises(ValueError, match="union_find: right\\[0\\] = 5 is not a node index below num_nodes=3"):
        mk.union_find(pa.array([0]), pa.array([5]), num_nodes=3)
    with pytest.raises(ValueError, match="union_find: left contains negative value -1"):
        mk.union_find(pa.array([-1]), pa.array([0]))
    with pytest.raises(ValueError, match="union_find: left contains 1 nulls"):
        mk.union_find(pa.array([None, 1], pa.int64()), pa.array([0, 1]))
    with pytest.raises(TypeError, match="union_find: left: expected an int32, int64, uint32 or uint64 array"):
        mk.union_find(pa.array(["a"]), pa.array(["b"]))
