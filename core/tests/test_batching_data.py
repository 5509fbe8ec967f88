"""Row payload bytes, referenced file sizes, random sampling across shards and ``--measure``, on small real data."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mdf import Refiner, hookimpl
from mdf.batching.measure import measure_stages
from mdf.batching.payload import (
    MediaFiles,
    column_row_bytes,
    referenced_file_bytes,
    row_payload_bytes,
    row_text_chars,
)
from mdf.batching.sample import draw_sample
from mdf.io.jsonl import JsonlReader
from mdf.io.parquet import ParquetReader
from mdf.resolve import parse_recipe
from mdf.testing import register_plugin


@pytest.mark.parametrize(
    ("array", "expected"),
    [
        (pa.array(["ab", None, "ñ"]), [6, 4, 6]),  # bytes + a 4-byte offset; ñ is 2 bytes; null has no data
        (pa.array(["ab"], pa.large_string()), [10]),  # 8-byte offsets
        (pa.array([b"\x00" * 10], pa.binary()), [14]),
        (pa.array([1, 2], pa.int64()), [8, 8]),
        (pa.array([1.0], pa.float32()), [4]),
        (pa.array([True], pa.bool_()), [0.125]),
        (pa.array([[1, 2, 3], None, []], pa.list_(pa.int32())), [16, 4, 4]),  # 3 x 4 + offset
        (pa.array([{"a": 1, "b": "xyz"}], pa.struct([("a", pa.int16()), ("b", pa.string())])), [9]),  # 2 + 3 + 4
        (pa.array(["aa", "aa", "b"]).dictionary_encode(), [10, 10, 9]),  # value (2+4 / 1+4) + int32 index
        (pa.array(["x", "yyyy", "zz"]).slice(1, 2), [8, 6]),  # slices read their own offsets
        (pa.array([[b"ab"], [b"cde", b"f"]], pa.list_(pa.binary())).slice(1), [3 + 4 + 1 + 4 + 4]),
        (pa.chunked_array([["a"], ["bb", "c"]]), [5, 6, 5]),
    ],
)
def test_column_row_bytes(array, expected):
    assert column_row_bytes(array).tolist() == pytest.approx(expected)


def test_row_payload_sums_columns_and_ignores_bookkeeping():
    table = pa.table({"id": pa.array([1, 2], pa.int32()), "text": ["abc", ""], "_reason": ["x", None]})
    assert row_payload_bytes(table).tolist() == [4 + 3 + 4, 4 + 0 + 4]
    assert row_text_chars(pa.table({"t": ["ñañ", None], "n": [1, 2]})).tolist() == [3, 0]


def test_referenced_files_are_weighed(tmp_path):
    (tmp_path / "a.jpg").write_bytes(b"\xff" * 1_000)
    (tmp_path / "b.jpg").write_bytes(b"\xff" * 2_000)
    (tmp_path / "c.txt").write_bytes(b"x" * 500)  # any file: what is loaded counts, whatever its extension
    paths = ["a.jpg", "b.jpg", "gone.jpg", "https://x.example/c.jpg", "c.txt", None]
    table = pa.table({"path": paths, "caption": ["a.jpg"] * 6})  # the caption names a file but nothing loads it
    files = MediaFiles()
    sizes = referenced_file_bytes(table, ["path"], [str(tmp_path)], files)
    assert sizes.tolist() == [1_000, 2_000, 0, 0, 500, 0]
    assert (files.found, files.missing, files.remote, files.examples_missing) == (3, 1, 1, ["gone.jpg"])
    assert referenced_file_bytes(table, [], [str(tmp_path)], MediaFiles()).tolist() == [0] * 6


def _write_ids(tmp_path, files: int, rows: int, row_group: int) -> ParquetReader:
    for k in range(files):
        ids = np.arange(k * rows, (k + 1) * rows)
        pq.write_table(pa.table({"id": ids, "text": [f"row {i}" for i in ids]}), tmp_path / f"p{k}.parquet", row_group)
    return ParquetReader(paths=[str(tmp_path / "*.parquet")])


def test_parquet_sample_is_random_across_shards(tmp_path):
    reader = _write_ids(tmp_path, files=3, rows=5_000, row_group=500)
    sample = draw_sample(reader, reader.shards(), seed=1)
    ids = sample.table.column("id").to_numpy()
    assert sample.rows_total == 15_000 and sample.rows_sampled == 1_000  # 1 %, floor 1,000
    assert len(np.unique(ids)) == 1_000
    per_file = np.bincount(ids // 5_000, minlength=3)
    assert per_file.min() > 250, per_file  # ~333 each, not the head of the first file
    again = draw_sample(reader, reader.shards(), seed=1)
    assert again.table.column("id").to_pylist() == sample.table.column("id").to_pylist()


def test_parquet_sample_reads_a_bounded_number_of_row_groups(tmp_path):
    # 200,000 rows in 2,000 row groups: 1,000 rows drawn touch ~800 groups; only 64 are read
    reader = _write_ids(tmp_path, files=1, rows=200_000, row_group=100)
    sample = draw_sample(reader, reader.shards(), seed=0, max_row_groups=64)
    rule = next(r for r in sample.rules if r.name == "cluster_sample")
    assert rule.numbers["row_groups_read"] == 64 and rule.numbers["row_groups_total"] == 2_000
    groups = np.unique(sample.table.column("id").to_numpy() // 100)
    assert sample.rows_sampled == 1_000 and len(groups) <= 64
    assert groups.max() - groups.min() > 1_000  # spread over the file


def test_unsized_input_is_streamed(tmp_path):
    for k in range(3):
        lines = [json.dumps({"id": k * 100 + i, "text": "x" * i}) for i in range(100)]
        (tmp_path / f"f{k}.jsonl").write_text("\n".join(lines) + "\n")
    reader = JsonlReader(paths=[str(tmp_path / "*.jsonl")])
    sample = draw_sample(reader, reader.shards())
    assert sample.rows_total == 300 and sample.rows_sampled == 300 and sample.exact_total


class BloatRefiner(Refiner):
    """Adds a 10 KB column per row: a stand-in for an operator that decodes its input."""

    name = "bloat_refiner"

    def refine(self, batch):
        n = batch.num_rows
        blob = pa.Array.from_buffers(
            pa.binary(),
            n,
            [None, pa.py_buffer(np.arange(n + 1, dtype=np.int32) * 10_000), pa.allocate_buffer(n * 10_000)],
        )
        return batch.append_column("decoded", blob)


class _Bloat:
    @hookimpl
    def mdf_register_operators(self, registry):
        registry.add(BloatRefiner)


def test_measure_sees_what_operators_allocate(core_plugins):
    register_plugin(core_plugins, _Bloat(), "bloat-tests")
    recipe = parse_recipe(
        {
            "reader": {"type": "parquet", "paths": ["unused.parquet"]},
            "stages": [
                {"name": "clean", "operators": [{"char_count_filter": {"min_length": 3}}]},
                {"name": "decode", "operators": ["bloat_refiner"]},
            ],
            "writer": {"type": "parquet", "path": "unused-out"},
        },
        plugins=core_plugins,
    )
    table = pa.table({"text": ["ab", "abcd", "abcdef"] * 100})
    costs = {c.name: c for c in measure_stages(recipe, core_plugins, table)}
    assert costs["clean"].rows_in == 300 and costs["decode"].rows_in == 200  # the short third was filtered
    # 10,000 B added per row on ~8 B of payload: the peak growth sees at least the new column
    assert costs["decode"].growth_per_row >= 10_000
    assert costs["decode"].amplification > 100
    assert all(c.seconds >= 0 for c in costs.values())


class PathLoaderRefiner(Refiner):
    """Loads the file each ``column`` value names (here: only declares so)."""

    name = "path_loader_refiner"
    reads = {"column": "path"}

    class Params(Refiner.Params):
        column: str = "path"

    def refine(self, batch):
        return batch


class _PathLoader:
    @hookimpl
    def mdf_register_operators(self, registry):
        registry.add(PathLoaderRefiner)


def test_files_count_as_row_bytes_only_where_an_operator_reads_paths(core_plugins, tmp_path):
    from mdf.batching import plan_batches

    register_plugin(core_plugins, _PathLoader(), "path-loader-tests")
    for i in range(20):
        (tmp_path / f"f{i}.bin").write_bytes(b"\x00" * 10_000)
    pq.write_table(pa.table({"path": [f"f{i}.bin" for i in range(20)]}), tmp_path / "refs.parquet")

    def plan(op):
        recipe = parse_recipe(
            {
                "reader": {"type": "parquet", "paths": [str(tmp_path / "refs.parquet")]},
                "stages": [{"name": "s", "operators": [op]}],
                "writer": {"type": "parquet", "path": str(tmp_path / "out")},
            },
            plugins=core_plugins,
        )
        reader = ParquetReader(paths=[str(tmp_path / "refs.parquet")])
        return plan_batches(reader, reader.shards(), recipe, core_plugins, available_bytes=8 << 30, cores=2)

    loaded, listed = plan("path_loader_refiner"), plan("noop_refiner")
    # relative paths resolve against the Parquet file's folder: 10,000 B of file + "fNN.bin" and its offset
    assert loaded.p90_bytes == 10_000 + 7 + 4 and listed.p90_bytes == 7 + 4
    assert loaded.rule("referenced_files").numbers == {"found": 20, "missing": 0, "remote": 0}
    assert listed.rule("referenced_files") is None
