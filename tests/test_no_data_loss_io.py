"""Issue 29 (no data loss II), the reader/writer items: part-file names, JSONL values Arrow refuses, reserved
column names, one schema per rejected folder. Real files through the real CLI: inline in process, Ray in a
subprocess where the executor matters. Every test says how it was seen failing on the old code.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from mdf.io.lineage import read_shard_map
from mdf.io.sharding import MAX_ID_BYTES, shard_ids

from .bad_inputs.make_corpus import hostile_values, lines, records
from .conftest import run_mdf
from .reliability import cli, metrics, table, write_recipe

# pairs of names the old sanitiser mapped to one part file, and names it hid behind a leading "_"
CLASHING = ["a b.parquet", "a_b.parquet", "日本.parquet", "中国.parquet", "x.parquet", "_x.parquet"]
HIDDEN = ["файл один.parquet", "Été 2024.parquet"]


def parquet_inputs(folder: Path, names: list[str], rows: int = 300) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(names):
        pq.write_table(pa.Table.from_pylist(records(rows, seed=100 + i)), folder / name)
    return [str(folder / n) for n in names]


def run_inline(capsys, tmp_path: Path, paths: list[str], reader_spec: dict | None = None, **kw) -> tuple[int, str]:
    """``mdf run`` in process on :func:`write_recipe`'s recipe, its reader replaced by ``reader_spec``."""
    recipe = write_recipe(tmp_path, paths, **kw)
    if reader_spec is not None:
        recipe.write_text(yaml.safe_dump({**yaml.safe_load(recipe.read_text()), "reader": reader_spec}))
    code, _, err = cli(capsys, "run", str(recipe))
    return code, err


def assert_all_rows_readable(tmp_path: Path, rows_in: int) -> None:
    """What every dataset reader sees of out/ and rej/ adds up to the rows read, and mdf says so too."""
    kept, rejected = table(tmp_path / "out"), table(tmp_path / "rej")
    m = metrics(tmp_path / "out")
    assert m["rows_read"] == rows_in and m["balanced"]
    assert (kept.num_rows, rejected.num_rows) == (m["rows_written"], m["rows_rejected"])


def test_shard_ids_unique_after_sanitising_and_never_hidden():
    """Items 1, 2: ``a b``/``a_b`` and ``日本``/``中国`` were one id each; ``файл один`` became ``_____`` (hidden).
    Fails on the old sharding: seen (``['a_b', 'a_b', '_', '_', ...]``)."""
    ids = shard_ids([f"/d/{n}" for n in CLASHING + HIDDEN])
    assert len({i.casefold() for i in ids}) == len(ids)
    assert not any(i.startswith(("_", ".")) or "." in i for i in ids)
    assert "日本" in ids and "файл_один" in ids and "Été_2024" in ids  # letters of every script stay readable
    assert shard_ids([f"/d/{n}" for n in CLASHING + HIDDEN]) == ids  # deterministic: --resume finds them


def test_shard_ids_stay_under_the_file_name_limit():
    """Item 11: deep folders (a symlink loop followed by ``**``) made a part-file name over 255 bytes and the
    run crashed on open(). Fails on the old sharding: seen (an id of 1,400 bytes)."""
    deep = ["/d/" + "/".join(["loop"] * 300) + f"/f{i}.parquet" for i in range(2)] + ["/d/x.parquet"]
    ids = shard_ids(deep)
    assert all(len(i.encode()) <= MAX_ID_BYTES for i in ids) and len(set(ids)) == 3
    assert ids[0] != ids[1]  # the hash of the whole path tells the two apart where the cut head is equal


def run_with(executor: str, capsys, recipe) -> tuple[int, str]:
    """``mdf run RECIPE``: in this process inline (capsys reads it), in a subprocess on Ray; (exit code, stderr)."""
    if executor == "inline":
        code, _, err = cli(capsys, "run", str(recipe))
        return code, err
    result = run_mdf("run", str(recipe))
    return result.returncode, result.stderr


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_clashing_and_non_ascii_names_write_every_row_where_readers_see_it(tmp_path, capsys, executor):
    """Items 1, 2 end to end: before, 6 clashing inputs wrote 3 part files (exit 0, "balanced", half the rows on
    disk; with 2 workers a crash) and ``файл один.parquet``'s rows went to a ``_``-file pyarrow skips. Fails on
    the old code: seen (inline, 2 worker threads: "unexpected KeyError: 'a_b'"; Ray: exit 0, metrics 2,086 kept
    + 314 rejected, 522 + 78 readable)."""
    paths = parquet_inputs(tmp_path / "in", CLASHING + HIDDEN)
    recipe = write_recipe(tmp_path, [str(tmp_path / "in" / "*.parquet")], reader="parquet", executor=executor)
    code, err = run_with(executor, capsys, recipe)
    assert code == 0, err[-2000:]
    assert_all_rows_readable(tmp_path, 300 * len(paths))
    lineage = read_shard_map(str(tmp_path / "out"))  # which input wrote which part file
    assert sorted(lineage.values()) == sorted(paths)
    parts = {p.name.removesuffix(".parquet") for p in (tmp_path / "out").glob("*.parquet")}
    assert parts == set(lineage)
    for sid, path in lineage.items():  # each part file holds its own input's rows, none other's
        ids = set(pq.read_table(tmp_path / "out" / f"{sid}.parquet", columns=["id"]).column("id").to_pylist())
        assert {i.split("-")[0] for i in ids} <= {str(100 + paths.index(path))}


def test_deep_folder_input_runs(tmp_path, capsys):
    """Item 11 end to end: a folder 60 levels deep gave ``OSError: File name too long`` writing the part file.
    Fails on the old code: seen ("unexpected OSError: [Errno 36] File name too long")."""
    deep = tmp_path / "in" / os.path.join(*[f"level{i:02d}" for i in range(60)])
    parquet_inputs(deep, ["a.parquet"])
    parquet_inputs(tmp_path / "in", ["b.parquet"])
    code, err = run_inline(capsys, tmp_path, [str(tmp_path / "in")], reader="parquet")
    assert code == 0, err[-2000:]
    assert_all_rows_readable(tmp_path, 600)


@pytest.mark.parametrize(
    "columns", [None, ["id", "url", "text", "n"], {"id": "string", "url": "string", "text": "string", "n": "int64"}]
)
def test_jsonl_values_arrow_refuses_are_one_rejected_row_each(tmp_path, capsys, columns):
    """Item 5: a lone surrogate, an integer above int64 and 100 K nested ``[`` are one ``reader:bad_value`` row
    each (what was wrong in ``_reason_detail``), with and without ``columns:``, as are a surrogate in a key and
    an integer of 5,000 digits; the 41 other records are read.
    Fails on the old code: seen ("unexpected RecursionError" from the schema sample, all three; a CLI run
    without the deep line: "unexpected UnicodeEncodeError", 0 rows)."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "h.jsonl").write_bytes(hostile_values())
    reader = {"type": "jsonl", "paths": [str(tmp_path / "in")], **({"columns": columns} if columns else {})}
    ops = [{"text_length_filter": {"min_length": 1}}]
    code, err = run_inline(capsys, tmp_path, [], reader, ops=ops)
    assert code == 0, err[-2000:]
    assert_all_rows_readable(tmp_path, 46)
    rejected = table(tmp_path / "rej").to_pylist()
    ids = sorted(r["_raw"][:12] for r in rejected)
    if columns is not None:  # the surrogate is in a key outside columns: that record is read
        assert ids == ['{"id": "b1",', '{"id": "d1",', '{"id": "l1",', '{"id": "s1",']
    else:
        assert ids == ['{"id": "b1",', '{"id": "d1",', '{"id": "k1",', '{"id": "l1",', '{"id": "s1",']
    assert {r["_reason"] for r in rejected} == {"reader:bad_value"}
    details = {r["_raw"][8:10]: r["_reason_detail"] for r in rejected}
    assert details["b1"].startswith("n: integer 123456789012345678901 outside int64")
    assert details["d1"] == "nested deeper than 48 levels" and "lone surrogate" in details["s1"]
    assert "4300 digits" in details["l1"] and ("k1" not in details or "lone surrogate" in details["k1"])
    kept = table(tmp_path / "out")
    assert "😀" in " ".join(kept.column("text").to_pylist())  # the valid surrogate pair is read as the emoji


def two_kinds_of_rejects(folder: Path) -> int:
    """``a.jsonl``: only lines the reader rejects; ``b.jsonl``: records a length filter partly rejects. The
    reader's rejects sort first, so their part file is the one a dataset reader used to take the schema of."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.jsonl").write_bytes(b'{"id": "broken\n[1, 2]\n\xff\xfe not utf-8\n')
    (folder / "b.jsonl").write_bytes(lines(records(200, seed=9)))
    return 203


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_rejected_folder_has_one_schema_with_every_rows_columns(tmp_path, capsys, executor):
    """Item 10: a JSONL run's rejected/ held part files with different columns, and ``pq.read_table(rej/)``
    returned only ``_raw, _reason, _shard``: the filtered rows' text and url were gone. Fails on the old code:
    seen (inline and Ray: columns ['_raw', '_reason', '_shard'])."""
    rows = two_kinds_of_rejects(tmp_path / "in")
    recipe = write_recipe(tmp_path, [str(tmp_path / "in")], executor=executor)
    code, err = run_with(executor, capsys, recipe)
    assert code == 0, err[-2000:]
    assert_all_rows_readable(tmp_path, rows)
    rejected = table(tmp_path / "rej")
    assert {"id", "url", "text", "_reason", "_raw", "_shard"} <= set(rejected.column_names)
    schemas = {pq.read_schema(p).remove_metadata() for p in (tmp_path / "rej").glob("*.parquet")}
    assert len(schemas) == 1  # every part file, every reader
    by_op = [r for r in rejected.to_pylist() if not r["_reason"].startswith("reader:")]
    assert by_op and all(r["text"] and r["url"] and r["_shard"] == "b" for r in by_op)
    by_reader = [r for r in rejected.to_pylist() if r["_reason"].startswith("reader:")]
    assert len(by_reader) == 3 and all(r["_raw"] and r["text"] is None for r in by_reader)


def test_input_columns_named_like_mdfs_own_are_data(tmp_path, capsys):
    """Item 8: a Parquet column ``_reason`` (any value) sent every row to rejected at the reader. It is renamed
    ``_prev_reason`` now (``_raw``, ``_reason_detail``, ``_shard`` the same way) and the rows are filtered like
    any other. Fails on the old code: seen (0 kept, 300 rejected with reasons 'x')."""
    (tmp_path / "in").mkdir()
    t = pa.Table.from_pylist(records(300, seed=11))
    t = t.append_column("_reason", pa.array(["x"] * 300)).append_column("_shard", pa.array(["s"] * 300))
    pq.write_table(t, tmp_path / "in" / "p.parquet")
    code, err = run_inline(capsys, tmp_path, [str(tmp_path / "in")], reader="parquet")
    assert code == 0, err[-2000:]
    assert_all_rows_readable(tmp_path, 300)
    kept = table(tmp_path / "out")
    assert kept.num_rows > 200 and set(kept.column("_prev_reason").to_pylist()) == {"x"}
    assert "_reason" not in kept.column_names and set(kept.column("_prev_shard").to_pylist()) == {"s"}


def test_rejected_output_runs_again_through_a_looser_recipe(tmp_path, capsys):
    """Item 8, the README's recipe: re-running mdf's own ``rejected/`` through a looser filter keeps the rows it
    now lets through, with the old reason in ``_prev_reason``; the reader's rejects (no columns, ``_raw`` only)
    are rejected again, ``_prev_raw`` kept. Fails on the old code: seen (exit 2: "text_length_filter reads
    column 'text', which the input does not have (input columns: _raw, _reason, _shard)"; with the columns
    there, every row would be rejected at the reader by its own ``_reason``)."""
    rows = two_kinds_of_rejects(tmp_path / "in")
    first = tmp_path / "first"
    first.mkdir()
    code, err = run_inline(capsys, first, [str(tmp_path / "in")])
    assert code == 0, err[-2000:]
    old = table(first / "rej")
    by_length = sum(r.startswith("text_length_filter:") for r in old.column("_reason").to_pylist())
    assert by_length > 0

    looser = [{"text_length_filter": {"min_length": 1}}]
    code, err = run_inline(capsys, tmp_path, [str(first / "rej")], reader="parquet", ops=looser)
    assert code == 0, err[-2000:]
    assert_all_rows_readable(tmp_path, old.num_rows)
    kept, again = table(tmp_path / "out"), table(tmp_path / "rej")
    kept_reasons = kept.column("_prev_reason").to_pylist()
    assert sum(r.startswith("text_length_filter:") for r in kept_reasons) == by_length
    assert all(r.startswith("url_filter:") or r.startswith("text_length_filter:") for r in kept_reasons)
    assert again.num_rows == 3 and all(again.column("_prev_raw").to_pylist())  # the reader's rejects
    assert metrics(first / "out")["rows_read"] == rows


def test_symlink_loop_reads_each_file_once(tmp_path, capsys):
    """Item 11: a symlink loop under ``**`` listed the file at every depth until the OS refused the path (41
    times here; under a deeper folder the longest gave a part-file name over 255 bytes: the crash of
    ``test_deep_folder_input_runs``). Each file is read once now, under its shortest path. Fails on the old
    code: seen (12,300 rows read for 300)."""
    parquet_inputs(tmp_path / "in" / "d", ["a.parquet"])
    (tmp_path / "in" / "d" / "loop").symlink_to(".")
    code, err = run_inline(capsys, tmp_path, [str(tmp_path / "in" / "**" / "*.parquet")], reader="parquet")
    assert code == 0, err[-2000:]
    assert_all_rows_readable(tmp_path, 300)
    assert list(read_shard_map(str(tmp_path / "out")).values()) == [str(tmp_path / "in" / "d" / "a.parquet")]


@pytest.mark.parametrize("reader", ["parquet", "jsonl"])
def test_file_name_that_is_not_utf8_is_read(tmp_path, capsys, reader):
    """Items 1, 2: a file name that is not UTF-8 (``\\xff\\xfe.parquet``, Python holds it with surrogates) gets a
    readable part-file name (``part``) and its input path in shards.json. Fails on the old code: seen (Parquet:
    "unexpected UnicodeEncodeError" from Arrow opening the file; JSONL: exit 0, its rows in ``_.parquet``,
    which readers skip: 86 + 14 of 172 + 28 readable)."""
    folder = tmp_path / "in"
    folder.mkdir()
    name = os.fsdecode(b"\xff\xfe." + reader.encode())
    data = pa.Table.from_pylist(records(100, seed=12))
    if reader == "parquet":
        pq.write_table(data, folder / "a.parquet")
    else:
        (folder / "a.jsonl").write_bytes(lines(records(100, seed=12)))
    os.link(folder / f"a.{reader}", folder / name)  # a second name for the same bytes: read twice
    code, err = run_inline(capsys, tmp_path, [str(folder)], reader=reader)
    assert code == 0, err[-2000:]
    assert_all_rows_readable(tmp_path, 200)
    assert read_shard_map(str(tmp_path / "out")) == {"a": str(folder / f"a.{reader}"), "part": str(folder / name)}
