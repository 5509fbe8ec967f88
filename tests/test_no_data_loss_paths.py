"""Issue 29, items 6, 9 and 11 (paths, the run record, the terminal): where a run may write, what ``--overwrite``
may delete, what a refused run leaves behind, and data text on the terminal (how a run ends, failed, signalled or
on a full disk: ``test_no_data_loss_endings.py``).

Each test names the defect it guards and was seen failing on it (on f53e219, the code before this change). Real
files and the real CLI, in process where only exit codes and lines matter.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .bad_inputs.make_corpus import lines, records
from .reliability import cli, error_lines, snapshot, write_recipe

pytest.importorskip("mdf_text")


def jsonl_input(folder: Path, rows: int = 300) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.jsonl").write_bytes(lines(records(rows, seed=3)))
    return [str(folder)]


def run_record(folder: Path) -> dict:
    return json.loads((folder / "_mdf" / "run.json").read_text())


def refused(capsys, *args: str) -> str:
    """Run ``mdf ARGS``; it must exit 2 with one error line, which is returned."""
    code, _, err = cli(capsys, *args)
    assert code == 2, err
    (line,) = error_lines(err)
    return line


# item 6: --overwrite and the folders it may replace


def test_item6_overwrite_of_the_working_directory_is_refused_and_deletes_nothing(tmp_path, capsys, monkeypatch):
    """``writer: {path: .}`` + ``--overwrite`` deleted the working directory: recipe, data, notes (fails on
    f53e219: seen, exit 0 and the recipe gone)."""
    monkeypatch.chdir(tmp_path)
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    (tmp_path / "notes.txt").write_text("mine")
    before = snapshot(tmp_path)
    for path in (".", str(tmp_path), "..", "in/.."):
        args = ("--set", f"writer.path={path}", "--set", "rejected=null")  # rejected/ inside '.' was refused
        line = refused(capsys, "run", "-q", "--overwrite", *args, str(recipe))
        assert line.startswith(f"error: writer.path: '{path}' is ") and "working directory" in line, line
    assert snapshot(tmp_path) == before and not list(tmp_path.parent.glob(f".{tmp_path.name}.mdf-*"))


def test_item6_writer_at_or_above_the_input_is_refused_and_the_input_kept(tmp_path, capsys):
    """With the writer at the input folder, --overwrite replaced the input by the filtered rows (fails on
    f53e219: seen, the input folder held only the part file after)."""
    folder = tmp_path / "data" / "in"
    recipe = write_recipe(tmp_path, jsonl_input(folder))
    link = tmp_path / "link"
    link.symlink_to(folder)
    before = snapshot(tmp_path / "data")
    for path, what in ((folder, "is the input"), (tmp_path / "data", "holds the input"), (link, "is the input")):
        line = refused(capsys, "run", "-q", "--overwrite", "--set", f"writer.path={path}", str(recipe))
        assert line.startswith(f"error: writer.path: '{path}' {what} '{folder}' (reader.paths[0])"), line
    assert snapshot(tmp_path / "data") == before
    line = refused(capsys, "run", "-q", "--overwrite", "--set", f"writer.path={tmp_path}", str(recipe))
    assert line.startswith(f"error: writer.path: '{tmp_path}' holds the recipe {recipe}; --overwrite would delete")


def test_item6_an_input_file_linked_from_the_output_is_refused(tmp_path, capsys):
    """The glob check sees patterns; a symlinked input file lying in the output folder is caught by its real
    path (fails on f53e219: seen, exit 0)."""
    real = tmp_path / "out"
    jsonl_input(real)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").symlink_to(real / "a.jsonl")
    recipe = write_recipe(tmp_path, [str(tmp_path / "in" / "*.jsonl")])
    line = refused(capsys, "run", "-q", "--overwrite", str(recipe))
    assert line.startswith(f"error: writer.path: '{real}' ({real}) holds the input folder {real}"), line
    assert (real / "a.jsonl").read_bytes() == lines(records(300, seed=3))


def test_item6_an_output_inside_the_folder_read_is_refused_before_it_reads_itself(tmp_path, capsys):
    """An output inside the input folder was read again by each --overwrite: 2,000 -> 4,000 rows (fails on
    f53e219: seen, the second run read 4,000 rows). A glob that cannot list the output's files is allowed."""
    folder = tmp_path / "in"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(records(2000, seed=4)), folder / "a.parquet")
    for paths in ([str(folder)], [str(folder / "**" / "*.parquet")]):
        recipe = write_recipe(tmp_path, paths, reader="parquet")
        line = refused(capsys, "run", "-q", "--overwrite", "--set", f"writer.path={folder / 'out'}", str(recipe))
        assert f"is inside the input '{paths[0]}' (reader.paths[0]); the next run would read this output" in line
        assert not (folder / "out").exists()
    recipe = write_recipe(tmp_path, [str(folder / "*.parquet")], reader="parquet")
    for _ in range(2):
        code, _, err = cli(capsys, "run", "-q", "--overwrite", "--set", f"writer.path={folder / 'out'}", str(recipe))
        assert code == 0, err
        record = json.loads((folder / "out" / "_mdf" / "metrics.json").read_text())
        assert record["rows_read"] == 2000


def test_item6_overwrite_deletes_only_a_folder_an_mdf_run_wrote(tmp_path, capsys):
    """--overwrite replaced any non-empty folder, a user's own included, and a folder a user put in an mdf
    output (fails on f53e219: seen, notes.txt deleted)."""
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    line = refused(capsys, "run", "-q", "--overwrite", str(recipe))
    assert line.startswith("error: writer.path: ") and "holds files no mdf run wrote (no _mdf/run.json)" in line
    assert (tmp_path / "out" / "notes.txt").read_text() == "mine" and not (tmp_path / "out" / "_mdf").exists()
    (tmp_path / "out" / "notes.txt").unlink()
    assert cli(capsys, "run", "-q", str(recipe))[0] == 0
    (tmp_path / "out" / "notes").mkdir()  # a folder inside an mdf output: no writer makes one
    (tmp_path / "out" / "notes" / "n.txt").write_text("mine")
    line = refused(capsys, "run", "-q", "--overwrite", str(recipe))
    assert "holds 1 file(s) the run that wrote it did not write ('notes')" in line  # message of issue 46's item 2
    assert (tmp_path / "out" / "notes" / "n.txt").exists()
    shutil.rmtree(tmp_path / "out" / "notes")
    code, _, err = cli(capsys, "run", "-q", "--overwrite", str(recipe))  # an mdf output: replaced
    assert code == 0, err


# item 9: the writer/rejected overlap, on resolved paths


@pytest.mark.parametrize(
    "writer,rejected",
    [("x/../out", "out/rej"), ("out", "x/../out/rej"), ("out/rej/..", "out"), ("link", "out/rej")],
)
def test_item9_writer_and_rejected_overlap_is_seen_through_dots_and_links(
    tmp_path, capsys, monkeypatch, writer, rejected
):
    """Writer ``x/../out`` with rejected ``out/rej`` passed, and ``pq.read_table(out/)`` mixed kept and
    rejected rows (fails on f53e219: seen, exit 0 for both ``x/..`` cases and "unexpected FileExistsError" for
    the link; ``out/rej/..`` was caught already)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "out")
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    line = refused(
        capsys, "run", "-q", "--set", f"writer.path={writer}", "--set", f"rejected.path={rejected}", str(recipe)
    )
    assert line.startswith(f"error: rejected.path: '{rejected}' ") and f"overlaps writer.path '{writer}'" in line
    assert not (tmp_path / "out").exists()


# item 11: refused runs, failed runs, a full disk, an empty path, data on the terminal


def test_item11_a_refused_run_leaves_nothing_so_the_next_run_is_not_refused(tmp_path, capsys):
    """A run refused with exit 2 had already claimed the writer folder (``out/_mdf/run.json``), so the next run
    was refused as "not empty" (fails on f53e219: seen)."""
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    (tmp_path / "rej").mkdir()
    (tmp_path / "rej" / "theirs.txt").write_text("x")
    line = refused(capsys, "run", "-q", str(recipe))
    assert line.startswith("error: rejected.path: ") and "is not empty" in line
    assert not (tmp_path / "out").exists() and sorted(os.listdir(tmp_path / "rej")) == ["theirs.txt"]
    code, _, err = cli(capsys, "run", "-q", "--set", f"rejected.path={tmp_path / 'rej2'}", str(recipe))
    assert code == 0, err


def test_item11_a_run_refused_after_its_claim_takes_the_claim_back(tmp_path, capsys):
    """An unreachable Ray address is found after the folders are claimed: the refused run left
    ``out/_mdf/run.json`` and the next run was refused as "not empty" (fails on f53e219: seen)."""
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    ray = ("--set", "executor.type=ray", "--set", "executor.address=127.0.0.1:1")
    line = refused(capsys, "run", "-q", *ray, str(recipe))
    assert line.startswith("error: cannot reach the Ray cluster at '127.0.0.1:1'")
    assert not (tmp_path / "out").exists() and not (tmp_path / "rej").exists()
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    assert code == 0, err


@pytest.mark.parametrize("role", ["writer", "rejected"])
def test_an_output_url_is_refused_not_written_to_a_local_folder_named_like_it(tmp_path, capsys, monkeypatch, role):
    """``writer: {path: s3://bucket/out}`` ran, exit 0, and wrote a local folder ``s3:/bucket/out`` in the working
    directory: the user believed the output was on S3 (seen: exit 0 and the folder, before the check). s3:// is
    written now (tests/test_storage_write.py); a protocol mdf does not write is still refused, and so is a whole
    bucket (seen: with the check on the scheme removed, gs:// failed late, exit 1, on 'an object lock needs an
    s3:// URL')."""
    monkeypatch.chdir(tmp_path)
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    original = recipe.read_text()
    target = str(tmp_path / ("out" if role == "writer" else "rej"))
    for url, said in [
        ("gs://bucket/out", "mdf writes only local folders and s3:// prefixes (gs:// is not written yet); write to "
         "s3:// or a local folder and copy it up"),
        ("https://host/out", "mdf writes only local folders and s3:// prefixes (https:// is read only); write to "
         "s3:// or a local folder and copy it up"),
        ("s3://bucket", "names a whole bucket; --overwrite would replace all of it; name a prefix, e.g. "
         "s3://bucket/out"),
    ]:  # fmt: skip
        recipe.write_text(original.replace(target, url))
        code, _, err = cli(capsys, "run", "-q", str(recipe))
        assert code == 2, err
        sep = ": " if said.startswith("mdf") else " "
        assert error_lines(err) == [f"error: {role}.path: '{url}'{sep}{said}"], err
        assert not (tmp_path / url.split("/")[0]).exists()


def test_item11_an_empty_writer_path_is_exit_2_naming_it(tmp_path, capsys):
    """``--set writer.path=`` was "unexpected FileNotFoundError ..., please report it" (fails on f53e219: seen)."""
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    for role in ("writer", "rejected"):
        for command in ("run", "validate"):
            line = refused(capsys, command, "--set", f"{role}.path=", str(recipe))
            assert line == f"error: {role}.path: '' is empty; name the output folder, e.g. out/"


def test_item11_an_output_path_the_file_system_refuses_is_exit_2(tmp_path, capsys):
    """A symlink loop or a name over 255 bytes in ``writer.path`` was "unexpected OSError ..., please report it"
    (fails on f53e219: seen, exit 1 for each)."""
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for path, says in (
        (tmp_path / "loop" / "out", "goes round a loop of symbolic links"),
        (tmp_path / ("a" * 300), "is too long for the file system"),
    ):
        line = refused(capsys, "run", "-q", "--set", f"writer.path={path}", str(recipe))
        assert line.startswith("error: writer.path: ") and says in line and len(line) < 400, line


def warc_record(uri: str, encoding: bytes, body: bytes) -> bytes:
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: " + encoding + b"\r\n\r\n" + body
    head = (
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:" + uri.encode() + b">\r\n"
        b"WARC-Target-URI: http://" + uri.encode() + b".example/\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n"
        b"Content-Type: application/http; msgtype=response\r\nContent-Length: " + str(len(http)).encode() + b"\r\n\r\n"
    )
    return head + http + b"\r\n\r\n"


def test_item11_data_text_on_the_terminal_is_never_markup_or_escape_codes(tmp_path, capsys):
    """A WARC ``Content-Encoding`` value reached the table raw: ``[blink]`` was read as Rich markup and ESC
    sequences reached the terminal; so did a damaged file's name (fails on f53e219: seen, both). Since the WARC
    reader puts the value in ``_reason_detail`` (issue 46, item 8) the table shows only the reason's code, and
    the value, ESC included, is kept in the rejected output."""
    (tmp_path / "w").mkdir()
    page = b"<html><body><p>" + b"words " * 20 + b"</p></body></html>"
    (tmp_path / "w" / "a.warc").write_bytes(
        warc_record("a", b"[blink]z\x1b[2J", page) + warc_record("b", b"identity", page)
    )
    recipe = write_recipe(
        tmp_path,
        [str(tmp_path / "w")],
        reader="warc",
        ops=[{"text_length_filter": {"min_length": 1, "column": "body"}}],
    )
    code, out, err = cli(capsys, "run", str(recipe))
    assert code == 0, err
    assert "unsupported_content_encoding" in out
    assert "\x1b" not in out + err and "blink" not in out + err
    rejected = pq.read_table(tmp_path / "rej")
    assert rejected.column("_reason_detail").to_pylist() == ["[blink]z\x1b[2j"]
    bad = tmp_path / "bad"
    bad.mkdir()
    name = "[red]cut\x1b[2J.jsonl.gz"
    import gzip

    (bad / name).write_bytes(gzip.compress(lines(records(200, seed=5)))[:-300])
    recipe = write_recipe(tmp_path, [str(bad)])
    code, out, err = cli(capsys, "run", "--overwrite", str(recipe))
    assert code == 0, err
    shown = f"{bad}/[red]cut\\x1b[2J.jsonl.gz"
    assert f"damaged input: {shown}" in err.replace("\n", "") and "\x1b" not in out + err
    code, _, err = cli(capsys, "run", "-q", "--overwrite", "--strict", str(recipe))  # the one-line error too
    assert code == 1 and error_lines(err)[0].startswith(f"error: damaged input: {shown} ") and "\x1b" not in err
