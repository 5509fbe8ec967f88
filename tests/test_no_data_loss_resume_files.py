"""Issue 46, item 4: ``--resume`` refuses a file the recipe names (a blocklist, a word list, a fastText model,
``estimate_from``) that changed since the run began, so one output is never made by two models.

The files are found through the parameters' types (:mod:`mdf.named_files`), not a list of operators. Each test
was seen failing on eefbc81 (the code before this change), as its docstring says. The comparison happens when
the run claims its output, in the driver, before any executor starts: one kill-and-resume runs as users run it
(a subprocess killed with SIGKILL), the other cases in process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .bad_inputs.make_corpus import lines, records
from .conftest import run_mdf
from .reliability import cli, error_lines, table, write_recipe
from .test_no_data_loss import mdf_popen

pytest.importorskip("mdf_text")


def jsonl_input(folder: Path, files: int = 4, rows: int = 300) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (folder / f"part{i}.jsonl").write_bytes(lines(records(rows, seed=3 + i)))
    return [str(folder)]


def completed(out: Path) -> int:
    try:
        return len(json.loads((out / "_mdf" / "state" / "manifest.json").read_text())["completed"])
    except (OSError, ValueError):
        return 0


def refused_line(capsys, *args: str) -> str:
    code, _, err = cli(capsys, *args)
    assert code == 2, err
    (line,) = error_lines(err)
    return line


def test_a_blocklist_replaced_between_a_kill_and_resume_is_refused_naming_it(tmp_path):
    """The blocklist rewritten (same size, other domains) after a kill: ``--resume`` gave exit 0 and one output
    filtered by two blocklists (seen red on eefbc81: exit 0). Now exit 2 naming the key and the file; with the
    first blocklist back (copied again: same content, new time) the resume completes with the clean run's rows."""
    paths = jsonl_input(tmp_path / "in")
    blocklist = tmp_path / "block.txt"
    blocklist.write_text("site3.example\nsite5.example\n")
    hold = tmp_path / "hold"
    hold.mkdir()
    ops = [
        {"delay_refiner": {"hold_dir": str(hold), "hold_after_rows": 401}},
        {"url_filter": {"blocklist": str(blocklist)}},
    ]
    (tmp_path / "clean").mkdir()
    clean = write_recipe(tmp_path / "clean", paths, ops=ops[1:])
    assert run_mdf("run", "-q", str(clean)).returncode == 0
    recipe = write_recipe(tmp_path, paths, ops=ops, executor="inline")
    proc = mdf_popen("run", "-q", str(recipe))
    try:
        deadline = time.time() + 120
        while completed(tmp_path / "out") < 1:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.time() < deadline, "no shard completed"
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    original = blocklist.read_bytes()
    blocklist.write_text("site4.example\nsite6.example\n")  # the same size, other content
    (hold / "release").touch()
    resumed = run_mdf("run", "-q", "--resume", str(recipe))
    assert resumed.returncode == 2, resumed.stderr
    (line,) = [x for x in resumed.stderr.splitlines() if x.strip()]
    assert line == (
        f"error: writer.path: cannot --resume '{tmp_path / 'out'}': stages[0].operators[1].blocklist: '{blocklist}' "
        "changed since the run began (same size, other content), so the rows still to do would be made with another "
        "file than those done; use --overwrite"
    ), line
    blocklist.unlink()
    blocklist.write_bytes(original)  # put back: the same bytes, a new file and time
    resumed = run_mdf("run", "-q", "--resume", str(recipe))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert table(tmp_path / "out").sort_by("id").equals(table(tmp_path / "clean" / "out").sort_by("id"))


def test_a_word_list_and_estimate_from_files_changed_since_the_run_began_are_refused(tmp_path, capsys):
    """``bad_words_filter``'s word list (pydantic ``FilePath``) and a file added to ``score_filter``'s
    ``estimate_from`` folder were not looked at by ``--resume`` (seen red on eefbc81: exit 0 for both)."""
    (tmp_path / "in").mkdir()
    rows = records(300, seed=3)
    data = pa.table({"text": [r["text"] for r in rows], "score": [float(i % 17) for i in range(300)]})
    pq.write_table(data, tmp_path / "in" / "a.parquet")
    words = tmp_path / "en.txt"
    words.write_text("casino\n")
    scores = tmp_path / "scores"
    scores.mkdir()
    pq.write_table(pa.table({"score": [float(i) for i in range(100)]}), scores / "a.parquet")
    ops = [
        {"bad_words_filter": {"word_lists": {"en": str(words)}, "language_column": None}},
        {"score_filter": {"column": "score", "top_fraction": 0.5, "estimate_from": [str(scores)]}},
    ]
    recipe = write_recipe(tmp_path, [str(tmp_path / "in")], reader="parquet", ops=ops)
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    assert code == 0, err
    words.write_text("poker\n")
    line = refused_line(capsys, "run", "-q", "--resume", str(recipe))
    assert "stages[0].operators[0].word_lists.en: '" + str(words) + "' changed since the run began (" in line, line
    words.write_text("casino\n")
    pq.write_table(pa.table({"score": [float(i) for i in range(100, 200)]}), scores / "b.parquet")
    line = refused_line(capsys, "run", "-q", "--resume", str(recipe))
    assert f"stages[0].operators[1].estimate_from[0]: '{scores / 'b.parquet'}' is new since the run began" in line
    (scores / "b.parquet").unlink()
    code, _, err = cli(capsys, "run", "-q", "--resume", str(recipe))
    assert code == 0, err


def test_a_fasttext_model_replaced_after_the_run_began_is_refused(tmp_path, tmp_path_factory, capsys):
    """The fastText model replaced by another between a kill and ``--resume`` gave exit 0 and an output scored by
    two models (seen red on eefbc81: exit 0). ``run.json`` keeps what the run began with: size, time, SHA-256."""
    import importlib.util

    from .conftest import ROOT

    spec = importlib.util.spec_from_file_location(
        "fasttext_helpers", ROOT / "plugins" / "mdf-text" / "tests" / "fasttext_helpers.py"
    )
    assert spec is not None and spec.loader is not None
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    models = helpers.trained(tmp_path_factory)
    model = tmp_path / "model.bin"
    shutil.copy(models["bin"], model)
    texts = ["theorem proof lemma study", "buy click free casino deal", "minister said council vote"]
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"id": list(range(300)), "text": texts * 100}), tmp_path / "in" / "t.parquet")
    ops = [{"fasttext_classifier": {"model": str(model)}}]
    recipe = write_recipe(tmp_path, [str(tmp_path / "in")], reader="parquet", ops=ops)
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    assert code == 0, err
    size = model.stat().st_size
    shutil.copy(models["hs.bin"], model)
    line = refused_line(capsys, "run", "-q", "--resume", str(recipe))
    assert f"stages[0].operators[0].model: '{model}' changed since the run began (" in line, line
    record = json.loads((tmp_path / "out" / "_mdf" / "run.json").read_text())
    (entry,) = record["files"]["stages[0].operators[0].model"].values()  # as the run began
    assert entry["size"] == size and len(entry["sha256"]) == 64
