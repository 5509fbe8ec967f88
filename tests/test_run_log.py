"""Every run keeps ``<output>/_mdf/run.log`` (issue 19): the closing lines always name it, and an unexpected
error is one line on the terminal pointing at the traceback in it."""

from __future__ import annotations

import warnings

import pytest

from .bad_inputs.make_corpus import lines, records
from .reliability import cli, error_lines, write_recipe

pytest.importorskip("mdf_text")


def corpus(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(lines(records(300, seed=3)))
    return [str(folder / "*.jsonl")]


def test_inline_run_writes_its_log_and_names_it(tmp_path, capsys):
    recipe = write_recipe(tmp_path, corpus(tmp_path))
    code, _, err = cli(capsys, "run", str(recipe))
    assert code == 0, err
    log = tmp_path / "out" / "_mdf" / "run.log"
    assert f"log: {log}" in err.replace("\n", "")
    text = log.read_text()
    assert "mdf: run started: mdf " in text and "fingerprint " in text
    assert "mdf: executor: inline" in text and "shard(s)" in text
    assert "mdf: run finished: 300 read -> " in text and "(balanced)" in text


def test_overwrite_starts_a_fresh_log_beside_the_new_data(tmp_path, capsys):
    recipe = write_recipe(tmp_path, corpus(tmp_path))
    assert cli(capsys, "run", str(recipe))[0] == 0
    code, _, err = cli(capsys, "run", "--overwrite", str(recipe))
    assert code == 0, err
    # --overwrite builds a new output: its log starts afresh, beside the new data
    assert (tmp_path / "out" / "_mdf" / "run.log").read_text().count("run started") == 1


def test_an_unexpected_error_is_one_line_naming_the_log(tmp_path, capsys, monkeypatch):
    """A bug (here a KeyError raised where the executor is built) must not print a traceback."""
    import mdf.run as select

    def broken(plan):
        warnings.warn("a library's warning during the run", UserWarning, stacklevel=1)
        raise KeyError("no_such_key")

    monkeypatch.setattr(select, "build_executor", broken)
    recipe = write_recipe(tmp_path, corpus(tmp_path))
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    assert code == 1
    (line,) = error_lines(err)
    log = tmp_path / "out" / "_mdf" / "run.log"
    assert line.startswith("error: unexpected KeyError: 'no_such_key' (traceback in ") and str(log) in line
    assert "Traceback" not in err and "a library's warning" not in err
    text = log.read_text()
    assert "run failed: KeyError" in text and "Traceback (most recent call last)" in text
    assert "UserWarning: a library's warning during the run" in text
