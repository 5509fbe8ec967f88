"""The reliability suite of issue 13: one test per defect found by a hostile user, each naming it.

Real files, the real CLI (in process where only exit codes and lines matter, a subprocess where two runs or a
kill are involved), real Ray where the executor matters. Item 10 (Ray's session under the output) belongs to
the executors' issue and is not tested here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mdf import DAMAGED_INPUT

from .bad_inputs.make_corpus import lines, make_jsonl, records
from .conftest import ROOT, run_mdf
from .reliability import cli, damaged_rows, error_lines, metrics, snapshot, table, write_recipe

SLOW = {"delay_refiner": {"seconds_per_batch": 0.15}}


@pytest.fixture(scope="module")
def jsonl_corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus") / "jsonl"
    return folder, make_jsonl(folder)


def jsonl_files(folder: Path, n: int, rows: int = 400) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"cc-{i:05d}.jsonl").write_bytes(lines(records(rows, seed=10 + i)))
    return [str(folder / "*.jsonl")]


def mdf_popen(*args: str) -> subprocess.Popen:
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mdf.cli"]
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.Popen([*cmd, *args], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True)


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.time() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_item1_second_run_on_the_same_output_exits_2_naming_the_holder(tmp_path, capsys):
    """Item 1: two runs into one folder both exited 0 and the second overwrote the first's part files."""
    paths = jsonl_files(tmp_path / "in", 4)
    recipe = write_recipe(tmp_path, paths, ops=[SLOW, {"text_length_filter": {"min_length": 40}}])
    first = mdf_popen("run", "-q", str(recipe), "--set", "executor.batch_rows=50")
    try:
        wait_for(tmp_path / "out" / "_mdf" / "run.json", first)
        code, _, err = cli(capsys, "run", "-q", str(recipe))
        assert code == 2
        (line,) = err.strip().splitlines()
        assert line.startswith("error: ") and f"in use by another mdf run (pid {first.pid} on " in line, line
        assert "started 20" in line
    finally:
        assert first.wait(timeout=300) == 0, first.stderr.read() if first.stderr else ""
    m = metrics(tmp_path / "out")
    assert m["rows_read"] == 1600 and table(tmp_path / "out").num_rows == m["rows_written"]
    code, _, err = cli(capsys, "run", "-q", str(recipe), "--resume")  # the lock is gone with its holder
    assert code == 0, err


def test_item2_a_cut_zst_is_read_up_to_the_damage_and_the_damage_is_a_rejected_row(tmp_path, capsys, jsonl_corpus):
    """Item 2: a .jsonl.zst cut in half read 1,585 of 5,000 rows, exit 0, "balanced"; the rest vanished."""
    folder, expected = jsonl_corpus
    cut = folder / "cut.jsonl.zst"
    code, out, err = cli(capsys, "run", str(write_recipe(tmp_path, [str(cut)])))
    assert code == 0, err
    kept, rejected = table(tmp_path / "out"), table(tmp_path / "rej")
    (damage,) = damaged_rows(rejected)
    assert damage["file"] == str(cut) and 0 < damage["offset"] <= cut.stat().st_size and "zstd" in damage["error"]
    assert kept.num_rows + rejected.num_rows == expected["cut.jsonl.zst"]["rows"] + 1
    assert f"damaged input: {cut}" in err.replace("\n", " ")
    assert "DAMAGED INPUT" in out and metrics(tmp_path / "out")["damaged_inputs"][0]["file"] == str(cut)


def test_item3_a_folder_with_an_earlier_runs_files_is_refused_and_overwrite_replaces_it(tmp_path, capsys):
    """Item 3: a new run wrote beside an old run's part files; the stale cc-00002.parquet was read as output."""
    recipe = write_recipe(tmp_path, jsonl_files(tmp_path / "in", 3))
    assert cli(capsys, "run", "-q", str(recipe))[0] == 0
    before = snapshot(tmp_path / "out")
    assert "cc-00002.parquet" in before
    for f in (tmp_path / "in").glob("cc-00002*"):
        f.unlink()
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "writer.path" in err and "--overwrite" in err and "--resume" in err
    assert snapshot(tmp_path / "out") == before  # nothing touched
    code, _, err = cli(capsys, "run", "-q", str(recipe), "--resume")
    assert code == 2 and "cannot --resume" in err and "1 input file(s) removed" in err
    code, _, err = cli(capsys, "run", "-q", str(recipe), "--overwrite")
    assert code == 0, err
    assert sorted(snapshot(tmp_path / "out")) == ["cc-00000.parquet", "cc-00001.parquet"]
    assert table(tmp_path / "out").num_rows == metrics(tmp_path / "out")["rows_written"]
    assert not list(tmp_path.glob(".*mdf-*"))  # no staging folder left behind
    # the same rules for rejected: an empty writer folder but a used rejected folder is refused too
    shutil.rmtree(tmp_path / "out")
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    assert code == 2 and "rejected.path" in err


@pytest.mark.parametrize(
    "ops", [[{"url_filter": {"domains": ["b.example"]}}], [{"text_length_filter": {"min_length": 1}}]]
)
def test_item4_jsonl_types_come_from_a_sample_not_from_the_first_record(tmp_path, capsys, ops):
    """Item 4: "text": 42 in record 1 made 30 good records type_mismatch, or failed the whole run."""
    path = tmp_path / "first.jsonl"
    good = records(30, seed=4)
    path.write_bytes(lines([{"id": "x", "url": "https://a.example/", "text": 42}, *good]))
    code, _, err = cli(capsys, "run", "-q", str(write_recipe(tmp_path, [str(path)], ops=ops)))
    assert code == 0, err
    kept, rejected = table(tmp_path / "out"), table(tmp_path / "rej")
    assert kept.column("id").to_pylist() == [r["id"] for r in good]
    (reason,) = rejected.column("_reason").to_pylist()
    assert reason.startswith("reader:type_mismatch") and json.loads(rejected.column("_raw")[0].as_py())["text"] == 42


def test_item4_columns_may_give_the_types(tmp_path, capsys):
    path = tmp_path / "n.jsonl"
    path.write_bytes(lines([{"id": str(i), "n": i if i else "zero"} for i in range(10)]))
    recipe = write_recipe(tmp_path, [str(path)], ops=[{"noop_refiner": {}}])
    code, _, err = cli(capsys, "run", "-q", str(recipe), "--set", "reader.columns={id: string, n: int64}")
    assert code == 0, err
    assert table(tmp_path / "out").column("n").to_pylist() == list(range(1, 10))
    (reason,) = table(tmp_path / "rej").column("_reason").to_pylist()
    assert reason.startswith("reader:type_mismatch")
    # the sample says int64 (9 of 10); the recipe's type wins: the ints are the misfits now
    code, _, err = cli(
        capsys, "run", "-q", str(recipe), "--overwrite", "--set", "reader.columns={id: string, n: string}"
    )
    assert code == 0, err
    assert table(tmp_path / "out").column("n").to_pylist() == ["zero"]
    assert table(tmp_path / "rej").num_rows == 9


def test_item5_an_output_path_that_is_a_file_exits_2_in_validate_and_run(tmp_path, capsys):
    """Item 5: writer.path naming an existing file: validate said ok, run printed a Python traceback."""
    recipe = write_recipe(tmp_path, jsonl_files(tmp_path / "in", 1))
    (tmp_path / "out").write_text("I am a file")
    for cmd in ("validate", "run"):
        code, _, err = cli(capsys, cmd, str(recipe))
        assert code == 2 and error_lines(err) == [err.strip()], err
        assert err.startswith("error: writer.path: ") and "is a file" in err
    (tmp_path / "out").unlink()
    (tmp_path / "blocker").write_text("")
    code, _, err = cli(capsys, "validate", str(recipe), "--set", f"rejected.path={tmp_path / 'blocker' / 'rej'}")
    assert code == 2 and err.startswith("error: rejected.path: ") and "is a file" in err


def test_item6_a_truncated_gz_exits_0_naming_the_file_and_strict_exits_1(tmp_path, capsys, jsonl_corpus):
    """Item 6: a truncated .jsonl.gz exited 130 with the word 'aborted' (an EOFError became click's Abort)."""
    folder, expected = jsonl_corpus
    cut = folder / "cut.jsonl.gz"
    recipe = write_recipe(tmp_path, [str(cut)])
    code, _, err = cli(capsys, "run", "-q", str(recipe), "--strict")
    assert code == 1 and "aborted" not in err
    (line,) = error_lines(err)
    assert line.startswith(f"error: damaged input: {cut} at byte ") and "on_damaged_input: fail" in line
    shutil.rmtree(tmp_path / "out")
    shutil.rmtree(tmp_path / "rej")
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    assert code == 0 and f"damaged input: {cut}" in err
    assert table(tmp_path / "out").num_rows + table(tmp_path / "rej").num_rows == expected["cut.jsonl.gz"]["rows"] + 1


def two_files_one_struct(folder: Path) -> list[str]:
    """Two JSONL files: ``a`` as the sample shows, ``b`` with ``text`` objects (no check can see it early)."""
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(lines(records(50, seed=1)))
    (folder / "b.jsonl").write_bytes(lines([{**r, "text": {"t": r["text"]}} for r in records(50, seed=2)]))
    return [str(folder / "*.jsonl")]


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_item7_an_operator_failure_is_one_line_naming_stage_operator_shard_and_batch(tmp_path, executor):
    """Item 7: on Ray an operator failure was a 42-line remote stack trace; inline printed one line."""
    recipe = write_recipe(tmp_path, two_files_one_struct(tmp_path / "in"), executor=executor)
    result = run_mdf("run", "-q", str(recipe))
    assert result.returncode == 1, result.stderr[-3000:]
    (line,) = error_lines(result.stderr)
    assert line.startswith("error: stage 'clean': operator 'text_length_filter' failed on batch 0 of shard 'b': ")
    assert "struct<t: string>" in line
    assert "Traceback" not in result.stderr and "ray::" not in result.stderr
    log = tmp_path / "out" / "_mdf" / "run.log"  # every run keeps one; a failure's traceback goes there
    assert "run failed: OperatorError" in log.read_text() and "Traceback (most recent call last)" in log.read_text()
    if executor == "ray":
        assert f"(remote traceback in {log})" in line
        remote = log.read_text()
        assert "ray::ShardActor.run()" in remote and 'mdf/operators.py", line' in remote


def test_item8_validate_checks_the_columns_operators_read_before_any_work(tmp_path, capsys):
    """Item 8: validate missed a column the input lacks or has with the wrong type; run failed midway."""
    src = tmp_path / "in"
    src.mkdir()
    data = {"id": ["a"], "url": ["https://x.example/"], "body": ["hello"], "n": [1]}
    pq.write_table(pa.table(data), src / "a.parquet")
    recipe = write_recipe(tmp_path, [str(src)], reader="parquet")
    for cmd in ("validate", "run"):
        code, _, err = cli(capsys, cmd, str(recipe))
        assert code == 2 and error_lines(err) == [err.strip()], err
        assert err.startswith("error: stages[0].operators[1].column: text_length_filter reads column 'text'")
        assert "(input columns: id, url, body, n)" in err
    assert not (tmp_path / "out").exists()
    code, _, err = cli(capsys, "validate", str(recipe), "--set", "stages[0].operators[1].column=n")
    assert code == 2 and "reads column 'n' as string|binary, but it is int64" in err
    jsonl = tmp_path / "j.jsonl"
    jsonl.write_bytes(lines(records(20)))
    code, _, err = cli(
        capsys, "validate", str(recipe), "--set", f"reader={{type: jsonl, paths: [{jsonl}]}}",
        "--set", "stages[0].operators[0].column=link",
    )  # fmt: skip
    assert code == 2 and err.startswith("error: stages[0].operators[0].column: url_filter reads column 'link'")
    (tmp_path / "j").mkdir()
    (tmp_path / "j" / "a-empty.jsonl").write_bytes(b"")  # an empty first file says nothing about columns
    shutil.copy(jsonl, tmp_path / "j" / "b.jsonl")
    code, _, err = cli(capsys, "validate", str(recipe), "--set", f"reader={{type: jsonl, paths: [{tmp_path / 'j'}]}}")
    assert code == 0, err


def test_item9_resumed_metrics_cover_the_whole_run_and_the_output_reads_as_a_dataset(tmp_path, capsys, jsonl_corpus):
    """Item 9: metrics.json among the part files broke pyarrow's read of the folder; after --resume it
    covered only the resumed shards."""
    folder, expected = jsonl_corpus
    src = tmp_path / "in"
    jsonl_files(src, 2)
    shutil.copy(folder / "cut.jsonl.gz", src / "z-cut.jsonl.gz")  # sorted last: read after two good shards
    recipe = write_recipe(tmp_path, [str(src)])
    code, _, err = cli(capsys, "run", "-q", str(recipe), "--strict")
    assert code == 1 and "z-cut.jsonl.gz" in err
    code, out, err = cli(capsys, "run", str(recipe), "--resume")
    assert code == 0, err
    m = metrics(tmp_path / "out")
    assert m["resumed"]["skipped_shards"] == 2 and "resumed: 2 shard(s)" in out
    assert m["rows_read"] == 800 + expected["cut.jsonl.gz"]["rows"] + 1 and m["balanced"]
    kept = pq.read_table(tmp_path / "out")  # the folder itself, as any dataset reader lists it
    assert kept.num_rows == m["rows_written"] and pq.read_table(tmp_path / "rej").num_rows == m["rows_rejected"]
    ops = m["stages"][0]["operators"]
    assert ops[0]["rows_in"] == m["rows_read"] - m["reader_reasons"][DAMAGED_INPUT]
    meta = ["lock", "metrics.json", "report.html", "run.json", "run.log", "shards.json", "state"]
    assert sorted(os.listdir(tmp_path / "out" / "_mdf")) == meta
    log = (tmp_path / "out" / "_mdf" / "run.log").read_text()  # both attempts, in order
    assert log.count("run started") == 2 and log.index("run failed: DamagedInputError") < log.index("resuming")


def test_overwrite_killed_at_any_moment_leaves_the_old_or_the_new_output_never_a_mix(tmp_path, capsys):
    """SIGKILL during --overwrite: the old output stays whole until the new one is complete, then swaps; a
    killed --overwrite is continued with --resume. (The swap itself is one rename; the test below covers a kill
    between the writer's and the rejected folder's swaps.)"""
    recipe = write_recipe(tmp_path, jsonl_files(tmp_path / "in", 3, rows=200), ops=[SLOW])
    assert cli(capsys, "run", "-q", str(recipe))[0] == 0
    old = snapshot(tmp_path / "out")
    new_recipe = write_recipe(tmp_path, [str(tmp_path / "in" / "cc-0000[01].jsonl")], ops=[SLOW])
    staging = tmp_path / ".out.mdf-staging"
    kill_when = [
        lambda: True,  # at once: before or while it claims the folders
        lambda: (staging / "_mdf" / "run.json").exists(),  # claimed, staging created, nothing written
        lambda: _completed(staging) >= 1,  # a shard committed in staging (the manifest says so)
        None,  # let it finish
    ]
    modes = []
    for when in kill_when:
        mode = "--resume" if (staging / "_mdf" / "run.json").exists() else "--overwrite"
        modes.append(mode)
        # one shard at a time: shard 1 still has ~1.5 s to go when shard 0 is in staging, so the kill lands
        # before the swap (two workers committed both shards and swapped within a poll interval, a flaky race)
        proc = mdf_popen(
            "run", "-q", str(new_recipe), mode, "--set", "executor.batch_rows=20", "--set", "executor.workers=1"
        )
        if when is None:
            assert proc.wait(timeout=300) == 0, proc.stderr.read() if proc.stderr else ""
        else:
            deadline = time.time() + 120
            while proc.poll() is None and not when() and time.time() < deadline:
                time.sleep(0.02)
            assert proc.poll() is None, (mode, proc.stderr.read() if proc.stderr else "")
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            assert snapshot(tmp_path / "out") == old  # killed before the swap: the old output, whole
    assert modes[2:] == ["--resume", "--resume"]
    now = snapshot(tmp_path / "out")
    assert sorted(now) == ["cc-00000.parquet", "cc-00001.parquet"]
    assert table(tmp_path / "out").num_rows == 400 and metrics(tmp_path / "out")["resumed"]["skipped_shards"] >= 1
    assert not list(tmp_path.glob(".*mdf-*"))


def _completed(folder: Path) -> int:
    """Shards the run in ``folder`` has committed, by its checkpoint manifest (0 before the first)."""
    try:
        return len(json.loads((folder / "_mdf" / "state" / "manifest.json").read_text())["completed"])
    except (OSError, ValueError, KeyError):
        return 0


def test_a_swap_cut_between_its_two_folders_is_rolled_forward_by_the_next_run(tmp_path, capsys):
    """The writer and rejected folders swap one after the other; a kill between them is finished later."""
    from mdf.output.local import READY

    recipe = write_recipe(tmp_path, jsonl_files(tmp_path / "in", 2))
    assert cli(capsys, "run", "-q", str(recipe))[0] == 0
    staged = tmp_path / ".rej.mdf-staging"
    shutil.copytree(tmp_path / "rej", staged)
    (staged / "new.parquet").write_bytes((staged / "cc-00000.parquet").read_bytes())
    (staged / "_mdf" / READY).write_text("{}")  # finish() marks every staged folder before the first swap:
    # this is what a SIGKILL after the writer's swap and before the rejected folder's leaves behind
    code, _, err = cli(capsys, "run", "-q", str(recipe), "--resume")
    assert code == 0, err
    assert "new.parquet" in snapshot(tmp_path / "rej") and not staged.exists()


def test_item11_folder_inputs_read_only_the_readers_files(tmp_path, capsys):
    """Item 11: a folder input read non-JSONL files as JSONL."""
    src = tmp_path / "in"
    src.mkdir()
    (src / "README.md").write_text("# not data")
    code, _, err = cli(capsys, "validate", str(write_recipe(tmp_path, [str(src)])))
    assert code == 2 and "reader.paths[0]" in err and "holds no file ending in .jsonl" in err


def test_item11_ops_lists_a_plugin_that_failed_and_unknown_operator_names_it(tmp_path):
    """Item 11: `mdf ops` said nothing of a plugin that failed to load; using its operator said 'unknown'."""
    site = tmp_path / "site"
    dist = site / "mdf_shiny-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mdf-shiny\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[mdf]\nshiny = mdf_shiny_missing.plugin\n")
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    ops = run_mdf("ops", env=env)
    assert ops.returncode == 0
    assert "plugin 'shiny' (mdf-shiny) failed to load: ModuleNotFoundError" in ops.stdout.replace("\n", " ")
    recipe = write_recipe(tmp_path, jsonl_files(tmp_path / "in", 1), ops=[{"shiny_filter": {}}])
    result = run_mdf("validate", str(recipe), env=env)
    assert result.returncode == 2
    assert "unknown operator 'shiny_filter'; plugin 'shiny' (mdf-shiny) failed to load" in result.stderr
