from __future__ import annotations

import gzip
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from mdf import DAMAGED_INPUT, Shard
from mdf.errors import InputError
from mdf.io.jsonl import JsonlReader, JsonlWriter
from mdf.io.parquet import ParquetReader, ParquetWriter
from mdf.metrics import REASON
from mdf.operators import split_rejected


def read_all(reader, batch_rows=1000):
    kept, rejected = [], []
    for shard in reader.shards():
        for batch in reader.read(shard, batch_rows):
            k, r = split_rejected(batch)
            if k.num_rows:
                kept.append(k)
            if r is not None:
                rejected.append(r)
    return kept, rejected


def test_parquet_shards_by_row_group_ranges_cover_every_row_once(tmp_path):
    pq.write_table(pa.table({"i": list(range(1000))}), tmp_path / "big.parquet", row_group_size=100)
    reader = ParquetReader(paths=[str(tmp_path / "big.parquet")], row_groups_per_shard=3)
    shards = reader.shards()
    assert [s.id for s in shards][:2] == ["big-rg00000", "big-rg00003"] and len(shards) == 4
    assert sum(s.rows for s in shards) == 1000
    kept, _ = read_all(reader, batch_rows=64)
    assert [i for b in kept for i in b.column("i").to_pylist()] == list(range(1000))
    assert max(b.num_rows for b in kept) <= 64


def test_small_row_groups_are_read_in_full_batches(tmp_path):
    """A file written in 500-row groups (DataTrove writes a group per 1,000 rows) is read in batches of
    ``batch_rows``, not a group each: every batch costs the operators' calls, a write and, on Ray, a key-state
    claim (2,000 claims of 225 keys in a 1 M-row cluster run). Seen red on the group-at-a-time reader (batches of
    500)."""
    pq.write_table(pa.table({"i": list(range(5000))}), tmp_path / "small.parquet", row_group_size=500)
    kept, _ = read_all(ParquetReader(paths=[str(tmp_path / "small.parquet")]), batch_rows=2048)
    assert [b.num_rows for b in kept] == [2048, 2048, 904]
    assert [i for b in kept for i in b.column("i").to_pylist()] == list(range(5000))


def test_damage_after_batches_that_span_groups_keeps_each_row_before_it_once(tmp_path):
    """500-row groups, 1,024-row batches, a page header broken in group 5: the two batches given before the error
    (groups 0-3 and 48 rows of group 4) stay, the rest of group 4 follows once, then one damage row at group 5's
    offset, as the group-at-a-time reader gave. Seen red with the re-read not skipping the rows already given
    (rows 2,000-2,047 twice) and with the damage reported at once (group 4's other rows lost)."""
    path = tmp_path / "broken.parquet"
    table = pa.table({"i": list(range(5000)), "s": [f"row {i}" for i in range(5000)]})
    pq.write_table(table, path, row_group_size=500, compression="zstd")
    meta = pq.read_metadata(path)
    col = meta.row_group(5).column(1)
    raw = bytearray(path.read_bytes())
    raw[col.data_page_offset : col.data_page_offset + 24] = b"\xff" * 24
    path.write_bytes(bytes(raw))
    kept, rejected = read_all(ParquetReader(paths=[str(path)]), batch_rows=1024)
    assert [i for b in kept for i in b.column("i").to_pylist()] == list(range(2500))
    assert [r.column(REASON).to_pylist() for r in rejected] == [[DAMAGED_INPUT]]
    offset = min(c.dictionary_page_offset or c.data_page_offset for c in map(meta.row_group(5).column, range(2)))
    assert json.loads(rejected[0].column("_raw")[0].as_py())["offset"] == offset


def test_shard_ids_do_not_collide_across_folders(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        pq.write_table(pa.table({"i": [1]}), tmp_path / sub / "part.parquet")
    ids = [s.id for s in ParquetReader(paths=[str(tmp_path / "**/*.parquet")]).shards()]
    assert ids == ["a__part", "b__part"]


def test_corrupt_parquet_footer_is_one_damaged_input_row_naming_the_file(tmp_path):
    """Guards: a corrupt footer used to fail the whole run; now it is accounted as one damaged-input row."""
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    reader = ParquetReader(paths=[str(bad)])
    (shard,) = reader.shards()
    (batch,) = list(reader.read(shard, 100))
    assert batch.column("_reason").to_pylist() == [DAMAGED_INPUT]
    raw = json.loads(batch.column("_raw")[0].as_py())
    assert raw["file"] == str(bad) and raw["offset"] == len(b"PAR1 this is not parquet") - 8 and raw["error"]


def test_unreadable_parquet_is_an_input_error_naming_the_file(tmp_path):
    with pytest.raises(InputError, match=r"gone\.parquet"):
        list(ParquetReader(paths=[str(tmp_path / "*.parquet")]).read(Shard("x", str(tmp_path / "gone.parquet")), 9))


@pytest.mark.parametrize("suffix", ["", ".gz", ".zst"])
def test_jsonl_reads_plain_gzip_zstd(tmp_path, suffix):
    lines = "".join(json.dumps({"id": i, "text": f"t{i}"}) + "\n" for i in range(500)).encode()
    path = tmp_path / f"d.jsonl{suffix}"
    data = {"": lambda b: b, ".gz": gzip.compress, ".zst": lambda b: zstandard.ZstdCompressor().compress(b)}
    path.write_bytes(data[suffix](lines))
    kept, rejected = read_all(JsonlReader(paths=[str(path)], block_bytes=1 << 16))
    assert [i for b in kept for i in b.column("id").to_pylist()] == list(range(500))
    assert not rejected


def test_jsonl_bad_lines_are_rejected_with_reasons_and_good_lines_kept(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        b'{"id": 1, "text": "ok"}\n'
        b'{"id": 2, "text": "broken\n'
        b'{"id": 3, "text": "caf\xe9 latin-1"}\n'
        b"[1, 2]\n"
        b"\n"
        b'{"id": 4, "text": "also ok"}\n'
        b'{"id": 5, "text": 17}\n'
    )
    kept, rejected = read_all(JsonlReader(paths=[str(path)]))
    assert [i for b in kept for i in b.column("id").to_pylist()] == [1, 4]
    reasons = [r for b in rejected for r in b.column(REASON).to_pylist()]
    assert len(reasons) == 4
    assert reasons[0].startswith("reader:bad_json") and reasons[1].startswith("reader:invalid_utf8")
    assert reasons[2] == "reader:not_an_object: list" and reasons[3].startswith("reader:type_mismatch")
    raws = [r for b in rejected for r in b.column("_raw").to_pylist()]
    assert raws[0] == '{"id": 2, "text": "broken'


def test_jsonl_byte_range_shards_own_each_line_exactly_once(tmp_path):
    rows = [{"id": i, "text": "x" * (i % 37)} for i in range(2000)]
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for step in (1 << 12, 5000, 65537):
        reader = JsonlReader(paths=[str(path)], bytes_per_shard=step, block_bytes=1 << 16)
        assert len(reader.shards()) == -(-os.path.getsize(path) // step)
        kept, rejected = read_all(reader)
        assert [i for b in kept for i in b.column("id").to_pylist()] == list(range(2000)), step
        assert not rejected


def test_jsonl_projection_fills_missing_fields_with_null(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": 1, "text": "a", "extra": 1}\n{"id": 2}\n')
    kept, _ = read_all(JsonlReader(paths=[str(path)], columns=["id", "text", "url"]))
    t = pa.Table.from_batches(kept)
    assert t.column_names == ["id", "text", "url"]
    assert t.column("text").to_pylist() == ["a", None] and t.column("url").null_count == 2


def test_parquet_writer_is_atomic_and_pieces_on_schema_change(tmp_path):
    w = ParquetWriter(path=str(tmp_path / "out"))
    w.write(pa.RecordBatch.from_pydict({"a": [1]}), "s1")
    assert os.listdir(tmp_path / "out") == ["s1.parquet.tmp"]
    w.write(pa.RecordBatch.from_pydict({"a": [2], "b": ["x"]}), "s1")
    paths = w.commit("s1")
    assert [os.path.basename(p) for p in paths] == ["s1.parquet", "s1.1.parquet"]
    assert sorted(os.listdir(tmp_path / "out")) == ["s1.1.parquet", "s1.parquet"]
    assert pq.read_table(paths[1]).column("b").to_pylist() == ["x"]
    assert pq.read_metadata(paths[0]).row_group(0).column(0).compression == "ZSTD"


def test_writer_abort_leaves_nothing(tmp_path):
    w = JsonlWriter(path=str(tmp_path / "o"), compression="gz")
    w.write(pa.RecordBatch.from_pydict({"a": [1], "b": [b"\x00\x01"]}), "s")
    w.abort("s")
    assert os.listdir(tmp_path / "o") == []


def test_jsonl_writer_roundtrip(tmp_path):
    w = JsonlWriter(path=str(tmp_path / "o"), compression="zst")
    w.write(pa.RecordBatch.from_pydict({"a": [1, None], "s": ["é", "b"]}), "s")
    (path,) = w.commit("s")
    assert path.endswith("s.jsonl.zst")
    kept, _ = read_all(JsonlReader(paths=[path]))
    assert pa.Table.from_batches(kept).to_pylist() == [{"a": 1, "s": "é"}, {"a": None, "s": "b"}]


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_jsonl_cut_compressed_stream_keeps_the_rows_before_and_one_damaged_row(tmp_path, suffix):
    """Guards issue 13 items 2 and 6: a cut stream read short in silence (zst) or aborted the run (gz)."""
    data = "".join(json.dumps({"id": i, "text": f"t{i}"}) + "\n" for i in range(20000)).encode()
    full = gzip.compress(data) if suffix == ".gz" else zstandard.ZstdCompressor().compress(data)
    cut = full[: len(full) // 2]
    path = tmp_path / f"d.jsonl{suffix}"
    path.write_bytes(cut)
    if suffix == ".gz":
        import zlib

        prefix = zlib.decompressobj(31).decompress(cut)
    else:
        prefix = zstandard.ZstdDecompressor().decompressobj().decompress(cut)
    kept, rejected = read_all(JsonlReader(paths=[str(path)], block_bytes=1 << 16))
    ids = [i for b in kept for i in b.column("id").to_pylist()]
    assert ids == list(range(prefix.count(b"\n")))  # every whole line before the damage, in order
    (damage,) = [r for b in rejected for r in b.to_pylist()]
    assert damage[REASON] == DAMAGED_INPUT
    raw = json.loads(damage["_raw"])
    assert raw["file"] == str(path) and 0 < raw["offset"] <= len(cut) and raw["error"]


def test_jsonl_types_from_a_sample_across_the_file_not_the_first_record(tmp_path):
    path = tmp_path / "d.jsonl"
    rows = [{"id": 0, "text": 42}] + [{"id": i, "text": f"t{i}"} for i in range(1, 200)]
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows))
    kept, rejected = read_all(JsonlReader(paths=[str(path)]))
    assert [i for b in kept for i in b.column("id").to_pylist()] == list(range(1, 200))
    assert kept[0].schema.field("text").type == pa.string()
    (bad,) = [r for b in rejected for r in b.to_pylist()]
    assert bad[REASON].startswith("reader:type_mismatch")


def test_folder_input_reads_only_the_readers_files_and_skips_metadata_folders(tmp_path):
    pq.write_table(pa.table({"i": [1, 2]}), tmp_path / "a.parquet")
    (tmp_path / "README.txt").write_text("not data")
    (tmp_path / "_mdf").mkdir()
    pq.write_table(pa.table({"i": [3]}), tmp_path / "_mdf" / "x.parquet")  # an earlier run's metadata
    assert [s.path for s in ParquetReader(paths=[str(tmp_path)]).shards()] == [str(tmp_path / "a.parquet")]


@pytest.mark.parametrize("writer", [ParquetWriter, JsonlWriter])
def test_writer_drop_columns_leaves_them_out_of_the_part_files(tmp_path, writer):
    """A column named in ``drop_columns`` is not written; the others are, unchanged."""
    w = writer(path=str(tmp_path / "out"), drop_columns=["body", "not_there"])
    w.write(pa.record_batch({"id": ["a", "b"], "body": [b"<p>x</p>", b"<p>y</p>"], "text": ["x", "y"]}), "s1")
    (path,) = w.commit("s1")
    if writer is ParquetWriter:
        table = pq.read_table(path)
        assert table.column_names == ["id", "text"] and table.column("text").to_pylist() == ["x", "y"]
    else:
        with open(path) as f:
            rows = [json.loads(line) for line in f]
        assert rows == [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}]


def test_rejected_rows_that_do_not_fit_the_folder_schema_keep_everything_in_raw():
    """A rejected row with a column the folder schema lacks (a refiner that does not declare it) or a value that
    does not cast keeps its columns that fit, and the whole row in ``_raw`` as JSON: one schema, nothing lost."""
    from mdf.io.rejected import conform, rejected_schema

    schema = rejected_schema(pa.schema([("text", pa.string()), ("n", pa.int64())]), {"lang": "string"})
    assert schema.names == ["text", "n", "lang", "_reason", "_reason_detail", "_raw", "_shard"]
    fits = pa.record_batch({"text": ["a"], "n": [1], "_reason": ["f:short"]})
    out = conform(fits, schema, "s0")
    assert out.schema == schema and out.to_pylist()[0] == {
        "text": "a", "n": 1, "lang": None, "_reason": "f:short", "_reason_detail": None, "_raw": None, "_shard": "s0"
    }  # fmt: skip
    extra = pa.record_batch({"text": ["b"], "n": ["x"], "score": [0.5], "_reason": ["g:low"]})
    row = conform(extra, schema, "s1").to_pylist()[0]
    assert row["text"] == "b" and row["n"] is None and json.loads(row["_raw"]) == {"text": "b", "n": "x", "score": 0.5}


def test_reserved_input_columns_move_up_one_prev():
    from mdf.io.base import rename_reserved

    batch = pa.record_batch({"_reason": ["r1"], "_prev_reason": ["r0"], "_raw": ["{}"], "text": ["t"]})
    assert rename_reserved(batch).schema.names == ["_prev_reason", "_prev_prev_reason", "_prev_raw", "text"]
    assert rename_reserved(batch.select(["text"])).schema.names == ["text"]
