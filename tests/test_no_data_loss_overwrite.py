"""Issue 46, item 2: ``--overwrite`` removes only what the earlier run wrote (local folders; the same on S3 is in
``test_storage_overwrite.py``).

Each test names the defect it guards and was seen failing on it (on eefbc81, the code before this change). Real
files and the real CLI, in process where only exit codes and lines matter. The executor does not matter here:
what an output holds is decided by the claim in the driver, before any executor starts.
"""

from __future__ import annotations

import json
import os
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .bad_inputs.make_corpus import lines, records
from .reliability import cli, error_lines, write_recipe

pytest.importorskip("mdf_text")


def jsonl_input(folder, files: int = 2, rows: int = 300) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (folder / f"part{i}.jsonl").write_bytes(lines(records(rows, seed=3 + i)))
    return [str(folder)]


def mine(folder) -> dict[str, bytes]:
    """The user's own files put into an earlier output: a Parquet file and a ``_``-prefixed note."""
    user = {"my-own-data.parquet": b"", "_notes.txt": b"my notes\n"}
    pq.write_table(pa.table({"x": [1, 2, 3]}), folder / "my-own-data.parquet")
    user["my-own-data.parquet"] = (folder / "my-own-data.parquet").read_bytes()
    (folder / "_notes.txt").write_bytes(user["_notes.txt"])
    return user


def test_overwrite_refuses_an_output_holding_files_the_earlier_run_did_not_write(tmp_path, capsys):
    """``--overwrite`` deleted ``my-own-data.parquet`` and ``_notes.txt`` a user had put into an earlier output
    (seen red on eefbc81: exit 0, both files gone). Now exit 2 naming them, nothing touched; once they are moved
    out the overwrite runs."""
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    assert cli(capsys, "run", "-q", str(recipe))[0] == 0
    for folder in (tmp_path / "out", tmp_path / "rej"):
        user = mine(folder)
        before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        code, _, err = cli(capsys, "run", "-q", "--overwrite", str(recipe))
        assert code == 2, err
        (line,) = error_lines(err)
        role = "writer" if folder.name == "out" else "rejected"
        assert line.startswith(f"error: {role}.path: '{folder}' holds 2 file(s) the run that wrote it did not "), line
        assert "'_notes.txt'" in line and "'my-own-data.parquet'" in line and "move them out" in line, line
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
        assert not list(tmp_path.glob(".*.mdf-staging"))
        for name in user:
            (folder / name).unlink()
    code, _, err = cli(capsys, "run", "-q", "--overwrite", str(recipe))
    assert code == 0, err


def test_the_earlier_runs_parts_are_known_exactly_from_its_record(tmp_path, capsys):
    """A completed run lists its part files in ``run.json``: a file beside them named like a part
    (``part0.parquet.bak``) is the user's (seen red on eefbc81: deleted, exit 0). A killed run's parts are known
    from its shards (``shards.json``), the temporary files of its last shards included."""
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    assert cli(capsys, "run", "-q", str(recipe))[0] == 0
    record = json.loads((tmp_path / "out" / "_mdf" / "run.json").read_text())
    assert sorted(record["parts"]) == sorted(p.name for p in (tmp_path / "out").glob("*.parquet"))
    part = sorted((tmp_path / "out").glob("*.parquet"))[0]
    backup = part.with_name(part.name + ".bak")
    backup.write_bytes(part.read_bytes())
    code, _, err = cli(capsys, "run", "-q", "--overwrite", str(recipe))
    assert code == 2 and f"'{backup.name}'" in err, err
    backup.unlink()
    # a run that did not complete: a part of it and a temporary file of a shard it was writing
    record["status"] = "failed"
    del record["parts"]
    (tmp_path / "out" / "_mdf" / "run.json").write_text(json.dumps(record))
    (tmp_path / "out" / (part.name + ".tmp")).write_bytes(b"half")
    code, _, err = cli(capsys, "run", "-q", "--overwrite", str(recipe))
    assert code == 0, err
    assert not list((tmp_path / "out").glob("*.tmp"))


def test_a_file_put_into_the_old_output_while_the_overwrite_runs_is_kept(tmp_path, capsys):
    """The new output is swapped in when the run ends; the old one was then deleted whole, with whatever a user
    had put into it meanwhile (seen red on eefbc81: the file was gone). Now only the old run's files are deleted
    and the rest is kept in a folder beside the output, named in the run log."""
    recipe = write_recipe(tmp_path, jsonl_input(tmp_path / "in"))
    assert cli(capsys, "run", "-q", str(recipe))[0] == 0
    hold = tmp_path / "hold"
    held = {"delay_refiner": {"hold_dir": str(hold), "hold_after_rows": 10}}
    recipe = write_recipe(tmp_path, [str(tmp_path / "in")], ops=[held, {"text_length_filter": {"min_length": 40}}])
    hold.mkdir()

    def later() -> None:
        deadline = time.monotonic() + 60
        while not (tmp_path / ".out.mdf-staging" / "_mdf" / "run.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        (tmp_path / "out" / "late.txt").write_text("written while the run ran")
        (hold / "release").touch()

    thread = threading.Thread(target=later)
    thread.start()
    code, _, err = cli(capsys, "run", "-q", "--overwrite", str(recipe))
    thread.join()
    assert code == 0, err
    assert not (tmp_path / "out" / "late.txt").exists()
    (kept,) = tmp_path.glob("out.mdf-kept-*")
    assert sorted(os.listdir(kept)) == ["late.txt"]
    assert "late.txt" in (tmp_path / "out" / "_mdf" / "run.log").read_text()
