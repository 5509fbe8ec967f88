"""Issue 46 ("No data loss III"), items 11, 12 and 15: a JSONL integer past int64 in a field only some lines carry,
a tampered ``metrics.json`` read by ``mdf report``, and how a run killed by SIGSEGV ends its record (SIGHUP is
tested beside SIGTERM in ``test_no_data_loss_endings.py``).

Each test says how it was seen failing on eefbc81 (the code before this change). Real files and the real CLI: in
process where only exit codes and lines matter, a subprocess where a signal ends the run.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from .bad_inputs.make_corpus import lines, records
from .reliability import cli, error_lines, metrics, write_recipe
from .test_no_data_loss import mdf_popen

pytest.importorskip("mdf_text")

BIG = "123456789012345678901234"


def test_an_integer_past_int64_in_a_field_few_lines_carry_is_rejected_not_rounded(tmp_path, capsys):
    """A field only some lines carry is left out of the sampled schema, and Arrow's JSON reader typed it double
    and wrote ``123456789012345678901234`` as ``1.2345678901234568e+23`` (seen red on eefbc81: no rejected row, the
    rounded double in the output). Now the line is rejected as ``reader:bad_value`` naming the field; the other
    lines, ``ref`` included where it fits, are kept; a float written as one (``1e+30``) stays a float."""
    rows = records(5000, seed=5)  # the sample reads 64 lines at 16 points (every 312 lines): 200-250 are not seen
    body = lines(rows).splitlines(keepends=True)
    body[200] = body[200].replace(b'{"id"', b'{"ref": ' + BIG.encode() + b', "id"')
    body[201] = body[201].replace(b'{"id"', b'{"ref": 7, "id"')
    body[250] = body[250].replace(b'{"id"', b'{"size": 1e+30, "id"')
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_bytes(b"".join(body))
    recipe = write_recipe(tmp_path, [str(tmp_path / "in")], ops=[{"text_length_filter": {"min_length": 1}}])
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    assert code == 0, err
    kept, rejected = pq.read_table(tmp_path / "out"), pq.read_table(tmp_path / "rej")
    assert kept.num_rows == 4999 and rejected.num_rows == 1
    (row,) = rejected.to_pylist()
    assert row["_reason"] == "reader:bad_value" and row["_reason_detail"] == f"ref: integer {BIG} outside int64"
    assert BIG in row["_raw"]
    refs = [r for r in kept.column("ref").to_pylist() if r is not None]
    assert refs == [7] and max(x for x in kept.column("size").to_pylist() if x is not None) == 1e30
    assert metrics(tmp_path / "out")["rows_read"] == 5000


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("null", "not a metrics.json mdf can read: it holds null, not the JSON object mdf writes"),
        ("[]", "not a metrics.json mdf can read: it holds a list, not the JSON object mdf writes"),
        ("[" * 100_000 + "]" * 100_000, "not a metrics.json mdf can read: it is nested too deep to be one mdf wrote"),
        ('{"version": 1, "executor": "inline", "rows_read": "many"}', "a value mdf cannot read (ValueError: "),
        ('{"version": 1, "executor": "inline", "stages": [7]}', "a value mdf cannot read (TypeError: "),
    ],
)
def test_report_on_a_tampered_metrics_json_is_one_line_naming_the_file(tmp_path, capsys, content, says):
    """``mdf report`` on a ``metrics.json`` changed after the run said "unexpected ... please report it" (seen red on
    eefbc81: exit 1 for each). Now exit 2, one line naming the file and what is wrong; the file is left as it is."""
    recipe = write_recipe(tmp_path, [str(tmp_path / "in")], ops=[{"text_length_filter": {"min_length": 1}}])
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_bytes(lines(records(50, seed=1)))
    assert cli(capsys, "run", "-q", str(recipe))[0] == 0
    path = tmp_path / "out" / "_mdf" / "metrics.json"
    path.write_text(content)
    code, _, err = cli(capsys, "report", str(tmp_path / "out"))
    assert code == 2, err
    (line,) = error_lines(err)
    assert line.startswith(f"error: {path}: ") and says in line and len(err.strip().splitlines()) == 1, line
    assert "please report it" not in line and path.read_text() == content


def held_run(tmp_path: Path) -> tuple[Path, object]:
    """A run held mid-way (its first shard committed, the rest waiting on a release file that never comes)."""
    (tmp_path / "in").mkdir()
    for i in range(3):
        (tmp_path / "in" / f"p{i}.jsonl").write_bytes(lines(records(300, seed=i)))
    hold = {"delay_refiner": {"hold_dir": str(tmp_path / "hold"), "hold_after_rows": 301}}
    recipe = write_recipe(tmp_path, [str(tmp_path / "in")], ops=[hold, {"text_length_filter": {"min_length": 1}}])
    (tmp_path / "hold").mkdir()
    proc = mdf_popen("run", "-q", str(recipe))
    state = tmp_path / "out" / "_mdf" / "state" / "manifest.json"
    deadline = time.time() + 120
    while not (state.exists() and json.loads(state.read_text() or "{}").get("completed")):
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.time() < deadline, "no shard completed"
        time.sleep(0.1)
    return recipe, proc


def test_a_run_killed_by_sigsegv_is_seen_as_crashed_by_the_next_command(tmp_path, capsys):
    """SIGSEGV (a crash in native code) ends the process before any Python runs, so ``run.json`` said ``running``
    for good (seen red on eefbc81: status running, and ``mdf report`` said "no _mdf/metrics.json"). Now the crash's
    stack goes to ``run.log`` (faulthandler), and the next command on the output sees the lock free and the record
    ``running``: ``mdf report`` says the run crashed (exit 2), a run without flags says so and names ``--resume``,
    which records the crash in ``run.json`` and continues."""
    recipe, proc = held_run(tmp_path)
    os.kill(proc.pid, signal.SIGSEGV)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGSEGV
    log = (tmp_path / "out" / "_mdf" / "run.log").read_text()
    assert "Fatal Python error: Segmentation fault" in log
    code, _, err = cli(capsys, "report", str(tmp_path / "out"))
    (line,) = error_lines(err)
    assert code == 2 and "the run that wrote it did not finish: it crashed or was killed" in line, line
    assert f"pid {proc.pid}" in line and "run.log" in line and "--resume" in line, line
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    (line,) = error_lines(err)
    assert code == 2 and "crashed or was killed" in line and "--resume" in line, line
    record = json.loads((tmp_path / "out" / "_mdf" / "run.json").read_text())
    assert record["status"] == "crashed" and str(proc.pid) in record["error"]
    (tmp_path / "hold" / "release").touch()
    code, _, err = cli(capsys, "run", "-q", "--resume", str(recipe))
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "_mdf" / "run.json").read_text())["status"] == "complete"
