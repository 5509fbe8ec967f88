"""Issue 46, item 9 (and the index's part of item 4): the ``index:`` path is checked like an output before any
work, a lost manifest is not silently a new index, the key column is one of the checked settings, the generation
files are checked by content, and ``--resume`` refuses an index another run changed since the run began.

Each test says how it was seen failing on eefbc81 (the code before this change).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from dedup_helpers import exact_corpus, recipe, write_corpus

from mdf.cli import main
from mdf_dedup.index.files import IndexFiles
from mdf_dedup.index.manifest import gen_files, read_manifest

UPDATE = {"index_mode": "update", "index_source": "id"}


def cli(tmp: Path, glob: str, op: dict, name: str, capsys, *flags: str, executor: dict | None = None) -> tuple:
    """Exit code and stderr of ``mdf run`` (or ``mdf validate`` with ``flags == ("validate",)``)."""
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(recipe(tmp, glob, op, executor or {"type": "inline"}, name)))
    capsys.readouterr()
    command = ["validate", str(path)] if flags == ("validate",) else ["run", str(path), "-q", *flags]
    try:
        main(command)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def one_line(code: int, err: str, want: int = 2) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == want and len(lines) == 1, err
    return lines[0]


def test_an_index_where_the_reader_lists_or_inside_an_output_is_refused(tmp_path, capsys):
    """The index at the input folder (the next run read its ``.parquet`` sources files as data) or inside
    ``writer.path`` (the output no longer reads as a dataset) ran (seen red on eefbc81: exit 0 for both). Now exit 2
    naming ``stages[0].operators[0].index``, in validate too, nothing written."""
    folder = tmp_path / "in"
    write_corpus(folder, exact_corpus(300, seed=4), files=1)
    out = tmp_path / "run" / "out"
    for index, says in (
        (folder, f"is the input '{folder}' (reader.paths[0]); the reader would read the index as data"),
        (folder / "idx", f"is inside the input '{folder}' (reader.paths[0]); the reader would read the index as data"),
        (out, f"is writer.path '{out}'"),
        (out / "idx", f"is inside writer.path '{out}'"),
        (tmp_path / "run", f"holds writer.path '{out}'"),
    ):
        for flags in (("validate",), ()):
            op = {"exact_dedup": {"index": str(index), **UPDATE}}
            line = one_line(*cli(tmp_path, str(folder), op, "run", capsys, *flags))
            assert line.startswith(f"error: stages[0].operators[0].index: '{index}' {says}"), line
        assert not (index / "manifest.json").exists() and not out.exists()


def test_an_index_path_that_is_a_file_is_one_line(tmp_path, capsys):
    """``index:`` naming a regular file: "unexpected NotADirectoryError ... please report it" (seen red on
    eefbc81: exit 1). Now exit 2, one line, in validate and run, read and update mode."""
    glob = write_corpus(tmp_path / "in", exact_corpus(300, seed=4), files=1)
    (tmp_path / "index").write_text("not a folder")
    for mode in ("read", "update"):
        for flags in (("validate",), ()):
            op = {"exact_dedup": {"index": str(tmp_path / "index"), "index_mode": mode}}
            line = one_line(*cli(tmp_path, glob, op, "run", capsys, *flags))
            assert line == (
                f"error: stages[0].operators[0].index: '{tmp_path / 'index'}' is a file; an index is a folder (or "
                "an s3:// prefix): name a new folder, or the folder of an index"
            ), line
    assert (tmp_path / "index").read_text() == "not a folder"


def test_a_lost_manifest_beside_generations_is_refused_not_a_new_index(tmp_path, built, capsys):
    """With ``manifest.json`` gone, an update run started a new index beside the old generations and every key
    they held was forgotten (seen red on eefbc81: exit 0, and the B run kept A's duplicates). Now exit 2 naming the
    files; a folder holding other files is not taken for an index either."""
    index, glob_b = built
    os.remove(Path(index) / "manifest.json")
    before = sorted(str(p.relative_to(index)) for p in Path(index).rglob("*"))
    op = {"exact_dedup": {"index": index, **UPDATE}}
    line = one_line(*cli(Path(index).parent, glob_b, op, "b", capsys))
    assert line.startswith(f"error: stages[0].operators[0].index: index {index} has no manifest.json but holds ")
    assert "restore manifest.json" in line, line
    assert sorted(str(p.relative_to(index)) for p in Path(index).rglob("*")) == before
    other = Path(index).parent / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("x")
    op = {"exact_dedup": {"index": str(other), **UPDATE}}
    line = one_line(*cli(Path(index).parent, glob_b, op, "c", capsys))
    assert "has no manifest.json but holds 'mine.txt'" in line, line


def test_the_key_column_is_a_checked_setting(tmp_path, built, capsys):
    """An index of ``text`` keys consulted with ``column: id`` ran and compared hashes of ids with hashes of
    texts (seen red on eefbc81: exit 0). Now exit 2 naming the difference."""
    index, glob_b = built
    op = {"exact_dedup": {"index": index, "column": "id"}}
    line = one_line(*cli(tmp_path, glob_b, op, "b", capsys))
    assert "made with column='text', this operator has column='id'" in line, line


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_a_generation_file_altered_in_place_is_found_by_its_checksum(tmp_path, built, capsys, executor, request):
    """A keys file with one byte flipped (same size) was used as it was: the run said a row was new or a
    duplicate by a key nobody wrote (seen red on eefbc81: exit 0). The manifest holds each file's SHA-256; a
    damaged file stops the run, exit 1, one line naming it, inline and on a Ray bucket actor."""
    if executor == "ray":
        pytest.importorskip("ray")
        request.getfixturevalue("local_ray")
    index, glob_b = built
    files = IndexFiles(index)
    gen = read_manifest(files)["generations"][0]
    keys_file = files.path(gen_files(gen, gen["files"][0]["bucket"])[0])
    data = bytearray(Path(keys_file).read_bytes())
    data[-3] ^= 0xFF
    Path(keys_file).write_bytes(bytes(data))
    spec = {"type": executor, "batch_rows": 200}
    code, err = cli(tmp_path, glob_b, {"exact_dedup": {"index": index}}, "b", capsys, executor=spec)
    line = one_line(code, err, want=1)
    assert keys_file in line and "does not match the checksum the manifest holds" in line, line
    assert all(len(f["key_xxh3"]) == len(f["source_xxh3"]) == 32 for f in gen["files"])  # xxh3-128, hex


def test_resume_refuses_an_index_another_run_added_to(tmp_path, built, capsys):
    """Between a run's start and its ``--resume``, another run added a generation to the index the run reads: the
    rows still to do would be compared with more keys than those done (seen red on eefbc81: exit 0). A generation
    the run itself added (an update run's own publication) is not a change."""
    index, glob_b = built
    op = {"exact_dedup": {"index": index}}
    assert cli(tmp_path, glob_b, op, "b", capsys)[0] == 0
    table = exact_corpus(300, seed=21)
    glob_c = write_corpus(tmp_path / "c", table, files=1)
    assert cli(tmp_path, glob_c, {"exact_dedup": {"index": index, **UPDATE}}, "c", capsys)[0] == 0
    assert cli(tmp_path, glob_c, {"exact_dedup": {"index": index, **UPDATE}}, "c", capsys, "--resume")[0] == 0
    line = one_line(*cli(tmp_path, glob_b, op, "b", capsys, "--resume"))
    assert f"stages[0].operators[0].index: '{index}' changed since the run began" in line, line
    shutil.rmtree(tmp_path / "b")
