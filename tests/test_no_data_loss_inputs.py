"""Issue 46, items 1 and 6 (local files): every input gets a part file of its own, an input named twice is read
once, and a ``**`` glob over symlink loops ends (the same over ``s3://``: ``test_storage_inputs.py``).

Each test names the defect it guards and how it was seen failing on eefbc81 (the code before this change):
real files, the real CLI, inline with two worker threads and on a local Ray.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .bad_inputs.make_corpus import lines, records
from .conftest import mdf_command, run_mdf
from .reliability import cli, error_lines, table, write_recipe

pytest.importorskip("mdf_text")
KEEP_ALL = [{"text_length_filter": {"min_length": 0}}]


def parquet(path: Path, rows: int, seed: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(records(rows, seed)), path)


def no_temp_files(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if ".tmp" in p.name]


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_item1_a_file_named_like_a_folder_path_gets_its_own_part_file(tmp_path, executor):
    """``data/a__b.parquet`` and ``data/a/b.parquet`` were both named ``a__b_parquet-<hash of 'a__b.parquet'>``:
    the hash was of the name after ``/`` became ``__``. Seen red on eefbc81: inline with 2 workers exit 1,
    "unexpected KeyError: 'a__b_parquet-...'"; on Ray exit 0 and 1,000 of the 2,000 rows on disk."""
    parquet(tmp_path / "data" / "a__b.parquet", 1000, seed=1)
    parquet(tmp_path / "data" / "a" / "b.parquet", 1000, seed=2)
    exe = {"type": "inline", "workers": 2} if executor == "inline" else {"type": "ray"}
    recipe = write_recipe(tmp_path, [str(tmp_path / "data" / "**" / "*.parquet")], "parquet", ops=KEEP_ALL)
    result = run_mdf("run", "-q", "--set", f"executor={exe}".replace("'", '"'), str(recipe))
    assert result.returncode == 0, result.stderr[-3000:]
    out = table(tmp_path / "out")
    assert out.num_rows == 2000 and len(set(out.column("id").to_pylist())) == 2000
    assert len(list((tmp_path / "out").glob("*.parquet"))) == 2
    assert no_temp_files(tmp_path / "out")


def test_item1_a_file_named_like_a_piece_of_another_gets_its_own_part_file(tmp_path, capsys):
    """A reader names the pieces of a file cut by ``bytes_per_shard`` ``x-b00000``, ``x-b00001``...; a file
    ``x-b00001.jsonl`` (smaller than a piece, so not cut) beside it was named ``x-b00001`` too. Seen red on
    eefbc81: exit 1, "unexpected AssertionError" (two shards of one part-file name in the run's tally)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "x.jsonl").write_bytes(lines(records(180, seed=1)))
    (data / "x-b00001.jsonl").write_bytes(lines(records(8, seed=2)))
    recipe = write_recipe(tmp_path, [str(data)], ops=KEEP_ALL)
    code, _, err = cli(capsys, "run", "-q", "--set", "reader.bytes_per_shard=4096", str(recipe))
    assert code == 0, err
    assert table(tmp_path / "out").num_rows == 188


def test_item1_an_input_named_twice_is_read_once_and_the_run_says_so(tmp_path, capsys):
    """Two globs that both match ``a.jsonl``, and a link to it: read once, and one line says so (it was read
    once on eefbc81 too, silently; this guards the line)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.jsonl").write_bytes(lines(records(50, seed=1)))
    (data / "link.jsonl").symlink_to(data / "a.jsonl")
    recipe = write_recipe(tmp_path, [str(data / "a.jsonl"), str(data / "*.jsonl")], ops=KEEP_ALL)
    code, out, err = cli(capsys, "validate", str(recipe))
    assert code == 0 and "input: 2 input file(s) named more than once in reader.paths" in out, out + err
    code, _, err = cli(capsys, "run", str(recipe))
    assert code == 0 and "input: 2 input file(s) named more than once" in err, err
    assert table(tmp_path / "out").num_rows == 50
    log = (tmp_path / "out" / "_mdf" / "run.log").read_text()
    assert "input: 2 input file(s) named more than once" in log


def test_item1_shard_ids_hash_the_input_not_its_readable_name():
    """The contract itself: distinct inputs, distinct ids (``//`` keys are distinct S3 keys), an input listed
    twice is refused. Seen red on eefbc81: both pairs below got one id each."""
    from mdf import RecipeError, shard_ids

    for files in (
        ["/d/a__b.parquet", "/d/a/b.parquet"],
        ["s3://b/crawl/seg/w1.warc.gz", "s3://b/crawl//seg/w1.warc.gz"],
        ["/d/x.jsonl", "/d/x-b00001.jsonl"],
    ):
        ids = shard_ids(files)
        assert len(set(ids)) == 2 and not any(i.endswith("-b00001") for i in ids), ids
    with pytest.raises(RecipeError, match="listed more than once"):
        shard_ids(["/d/a.parquet", "/d/a.parquet"])


def loops(root: Path) -> Path:
    """``d/`` with one JSONL file and two links back to ``d``: every path under ``d/**`` branches twice."""
    d = root / "d"
    d.mkdir()
    (d / "a.jsonl").write_bytes(lines(records(40, seed=1)))
    (d / "l1").symlink_to(d)
    (d / "l2").symlink_to(d)
    (d / "sub").mkdir()
    (d / "sub" / "up").symlink_to(d)
    return d


@pytest.mark.parametrize("command", ["validate", "run"])
def test_item6_a_double_star_glob_over_symlink_loops_ends_and_says_so(tmp_path, command):
    """``d/**/*.jsonl`` with two links back to ``d``. Seen red on eefbc81: ``mdf validate`` was still listing
    after 60 s, and so was ``mdf run`` (killed by this test's timeout; left alone they grew past 2 GB)."""
    d = loops(tmp_path)
    recipe = write_recipe(tmp_path, [str(d / "**" / "*.jsonl")], ops=KEEP_ALL)
    args = [*mdf_command(), command, *(["-q"] if command == "run" else []), str(recipe)]
    try:
        result = subprocess.run(args, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"mdf {command} over two symlink loops did not end in 60 s")
    assert result.returncode == 0, result.stderr[-3000:]
    said = result.stdout + result.stderr
    if command == "run":
        said = (tmp_path / "out" / "_mdf" / "run.log").read_text()
        assert table(tmp_path / "out").num_rows == 40
    assert "symlinked folder(s) lead to a folder already walked and were skipped" in said, said
    assert f"{d}/l1 -> {d}" in said


def test_item6_a_link_to_another_folder_is_still_walked(tmp_path, capsys):
    """Only folders already walked are skipped: a link to a folder outside the glob's root is followed (as
    ``glob`` did on eefbc81, where this run, in process, never ended because of the loops beside it)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "b.jsonl").write_bytes(lines(records(30, seed=2)))
    d = loops(tmp_path)
    (d / "more").symlink_to(elsewhere)
    recipe = write_recipe(tmp_path, [str(d / "**" / "*.jsonl")], ops=KEEP_ALL)
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    assert code == 0 and not error_lines(err), err
    assert table(tmp_path / "out").num_rows == 70


def test_item6_the_image_folder_reader_ends_over_symlink_loops_too(tmp_path):
    """``image_folder`` lists its own globs (through :func:`mdf.glob_files` now). Seen red on eefbc81:
    ``mdf validate`` over ``d/**/*.png`` with two loops was still listing after 60 s."""
    pytest.importorskip("mdf_image")
    from PIL import Image

    d = tmp_path / "d"
    d.mkdir()
    Image.new("RGB", (8, 8), (200, 10, 10)).save(d / "a.png")
    (d / "l1").symlink_to(d)
    (d / "l2").symlink_to(d)
    recipe = write_recipe(tmp_path, [str(d / "**" / "*.png")], "image_folder", ops=[{"image_metadata_refiner": {}}])
    try:
        result = subprocess.run([*mdf_command(), "validate", str(recipe)], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("mdf validate of an image_folder glob over two symlink loops did not end in 60 s")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "1 input shard(s)" in result.stdout and "were skipped" in result.stdout, result.stdout
