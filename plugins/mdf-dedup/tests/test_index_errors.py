"""The index refuses what would give wrong answers (exit 2, before any work) and never publishes half a run."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from dedup_helpers import exact_corpus, recipe, write_corpus
from index_helpers import ids, run

from mdf.cli import main
from mdf.testing import read_output
from mdf_dedup.index.files import IndexFiles
from mdf_dedup.index.manifest import LOCK, gen_files, read_manifest

SLOW = {"delay_refiner": {"seconds_per_batch": 0.03}}


def cli_run(tmp: Path, glob: str, op: dict, name: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit code and stderr of ``mdf run`` on a recipe with ``op``."""
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(recipe(tmp, glob, op, {"type": "inline"}, name)))
    capsys.readouterr()
    try:
        main(["run", str(path), "-q"])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("op", "difference"),
    [
        ({"exact_dedup": {"normalize": "lower"}}, "normalize='none', this operator has normalize='lower'"),
        ({"minhash_dedup": {}}, "made by exact_dedup, not minhash_dedup"),
    ],
)
def test_other_settings_exit_2_naming_the_difference(tmp_path, built, capsys, op, difference):
    index, glob_b = built
    name, params = next(iter(op.items()))
    code, err = cli_run(tmp_path, glob_b, {name: {**params, "index": index, "index_mode": "update"}}, "b", capsys)
    assert code == 2 and difference in err and "stages[0].operators[0].index" in err
    assert len(err.strip().splitlines()) == 1
    assert len(read_manifest(IndexFiles(index))["generations"]) == 1


def test_read_of_a_missing_index_exits_2(tmp_path, capsys):
    glob = write_corpus(tmp_path / "in", exact_corpus(200, seed=4), files=1)
    code, err = cli_run(tmp_path, glob, {"exact_dedup": {"index": str(tmp_path / "nothing")}}, "r", capsys)
    assert code == 2 and "no index at" in err and "index_mode: update" in err, err


def test_minhash_setting_and_version_exit_2(tmp_path, capsys):
    """num_perm (and so the bands) differ: exit 2; an index from another mdf version: exit 2."""
    glob = write_corpus(tmp_path / "in", exact_corpus(400, seed=4), files=1)
    index = str(tmp_path / "index")
    run(tmp_path, glob, {"minhash_dedup": {"index": index, "index_mode": "update"}}, "first")
    code, err = cli_run(tmp_path, glob, {"minhash_dedup": {"index": index, "num_perm": 64}}, "other", capsys)
    assert code == 2 and "bands=" in err, err
    files = IndexFiles(index)
    manifest = read_manifest(files)
    manifest["mdf_version"] = "0.0.1"
    (Path(index) / "manifest.json").write_text(json.dumps(manifest))
    code, err = cli_run(tmp_path, glob, {"minhash_dedup": {"index": index}}, "old", capsys)
    assert code == 2 and "made by mdf 0.0.1" in err, err


@pytest.mark.parametrize("damage", ["truncate", "remove"])
def test_damaged_generation_exits_1_naming_it_and_publishes_nothing(tmp_path, built, capsys, damage):
    """Fails on a loader that trusts the files (np.load: 'mmap length is greater than file size', or a bare
    FileNotFoundError, neither naming the generation): seen."""
    index, glob_b = built
    files = IndexFiles(index)
    manifest = read_manifest(files)
    gen = manifest["generations"][0]
    keys_file = files.path(gen_files(gen, gen["files"][0]["bucket"])[0])
    if damage == "truncate":
        os.truncate(keys_file, os.path.getsize(keys_file) // 2)
    else:
        os.remove(keys_file)
    op = {"exact_dedup": {"index": index, "index_mode": "update", "index_source": "id"}}
    code, err = cli_run(tmp_path, glob_b, op, "b", capsys)
    assert code == 1 and keys_file in err and ("truncated" if damage == "truncate" else "missing") in err, err
    assert read_manifest(files) == manifest
    assert sorted(os.listdir(index)) == sorted(["manifest.json", gen["id"], LOCK])  # no new generation


def test_second_update_run_refuses_naming_the_holder(tmp_path, built, capsys):
    """Another live run holds the index: exit 2 before any work, one line naming it; read mode still runs.
    Without the check at recipe load the run fails at its first batch with exit 1: seen."""
    index, glob_b = built
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock = {"fingerprint": "f", "output": "/data/crawl-07", "pid": holder.pid, "host": socket.gethostname(),
                "since": time.time()}  # fmt: skip
        (Path(index) / LOCK).write_text(json.dumps(lock))
        op = {"exact_dedup": {"index": index, "index_mode": "update", "index_source": "id"}}
        code, err = cli_run(tmp_path, glob_b, op, "b", capsys)
        assert code == 2 and "/data/crawl-07" in err and f"pid {holder.pid}" in err, err
        assert not (tmp_path / "b" / "out").exists() or not list((tmp_path / "b" / "out").glob("*.parquet"))
        code, err = cli_run(tmp_path, glob_b, {"exact_dedup": {"index": index}}, "read", capsys)
        assert code == 0, err
    finally:
        holder.kill()
        holder.wait()
    code, err = cli_run(tmp_path, glob_b, op, "after", capsys)  # the holder is gone: its lock is taken over
    assert code == 0, err
    assert len(read_manifest(IndexFiles(index))["generations"]) == 2 and not (Path(index) / LOCK).exists()


def test_killed_update_run_resumed_publishes_once(tmp_path):
    """An update run killed midway and resumed publishes one generation holding every key it kept; a second
    ``--resume`` publishes nothing more (without the index's check of the runs it holds: two generations,
    seen)."""
    table = exact_corpus(rows=3000, seed=8)
    glob = write_corpus(tmp_path / "in", table, files=3, row_group_rows=100)
    index = str(tmp_path / "index")
    op = {"exact_dedup": {"index": index, "index_mode": "update", "index_source": "id"}}
    r = recipe(tmp_path, glob, op, {"type": "inline", "batch_rows": 50})
    r["stages"][0]["operators"].insert(0, SLOW)
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(r))
    state = tmp_path / "run" / "out" / "_mdf" / "state" / "manifest.json"
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe), "run", str(path), "-q"]
    proc = subprocess.Popen(cmd, start_new_session=True, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            assert proc.poll() is None, proc.stderr.read()[-2000:]
            if state.exists() and len(json.loads(state.read_text() or "{}").get("completed", [])) >= 3:
                break
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert read_manifest(IndexFiles(index)) is None  # killed: nothing published
    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    again = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=300)
    (gen,) = read_manifest(IndexFiles(index))["generations"]
    kept = read_output(tmp_path / "run" / "out")
    assert gen["keys"] == kept.num_rows == len(ids(kept)) == len(set(table.column("text").to_pylist()))
    assert again.returncode == 0, again.stderr[-2000:]  # a resume of the finished run: publishes nothing more


def test_buckets_of_one_run_racing_for_the_lock_all_take_it(tmp_path):
    """Every bucket of one ``update`` run takes the lock at once (Ray starts them together). A bucket that read
    the lock between another's create and its write saw an empty file and refused with "being updated by the run
    writing None (pid -1 ...)": CI failed on it once in test_split_on_ray_keeps_what_one_inline_run_keeps. Seen
    red here with the lock created by O_EXCL then written (a sleep between the two made the window wide).

    Eight processes (fork + exec: a bare fork of this test process, which may hold Ray's and pyarrow's threads,
    hung a full-suite run for 15 minutes) wait for the same instant, then take the lock."""
    for attempt in range(6):
        root = str(tmp_path / f"index-{attempt}")
        at = time.time() + 3.0  # every process imported and waiting by then
        procs = [
            subprocess.Popen([sys.executable, "-c", TAKE_LOCK, root, str(at)], stdout=subprocess.PIPE, text=True)
            for _ in range(8)
        ]
        answers = [p.communicate(timeout=120)[0].strip() for p in procs]
        assert answers == ["ok"] * 8, answers


TAKE_LOCK = """
import sys, time
from mdf_dedup.index.files import IndexFiles
from mdf_dedup.index.manifest import IndexBusy, acquire

root, at = sys.argv[1], float(sys.argv[2])
time.sleep(max(0.0, at - time.time()))
try:
    acquire(IndexFiles(root), {"fingerprint": "f", "output": "/data/out"})
except IndexBusy as exc:
    print(exc)
else:
    print("ok")
"""


@pytest.mark.usefixtures("local_ray")
def test_damaged_generation_on_ray_is_one_line(tmp_path, built, capsys):
    """On Ray a bucket actor finds the damaged generation: the user reads the actor's error itself in one line,
    and the run's log keeps the actor's traceback. Fails with the actor's RayTaskError passed on (the one
    'line' held the whole remote traceback: 'ray::StateBucket.call() (pid=..., ...) File ".../store.py" ...'):
    seen."""
    pytest.importorskip("ray")
    index, glob_b = built
    files = IndexFiles(index)
    gen = read_manifest(files)["generations"][0]
    keys_file = files.path(gen_files(gen, gen["files"][0]["bucket"])[0])
    os.truncate(keys_file, os.path.getsize(keys_file) // 2)
    spec = recipe(tmp_path, glob_b, {"exact_dedup": {"index": index}}, {"type": "ray", "batch_rows": 200}, "b")
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(spec))
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(["run", str(path), "-q"])
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 1 and keys_file in err and "truncated" in err, err
    assert len(err.splitlines()) == 1 and "ray::" not in err and "Traceback" not in err and "\\n" not in err, err
    assert "StateBucket.call" in (tmp_path / "b" / "out" / "_mdf" / "run.log").read_text()
