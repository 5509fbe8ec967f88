"""Issue 51, array mode: ``mdf slurm run RECIPE --array N`` on a real Slurm (:mod:`tests.slurm_cluster`).

Each array task is an inline run of a slice of the recipe's shards (``mdf run --shards``) into the shared output,
with a completion record per shard; a dependent job (``mdf run --finalize``) checks every shard and publishes
``_SUCCESS``, ``metrics.json`` and the report. The cluster's ``MaxArraySize`` is 3 here, so 5 tasks go as two
arrays. Checked against an inline run of the same recipe on the same data:

* W1 (URL blocklist + length) in 5 tasks: the same part files, metrics with the same counts, split at
  MaxArraySize, ``mdf slurm status`` says every shard done;
* the CommonCrawl recipe's per-document stages (extract, language, length, URL) in 3 tasks: the same rows; the
  whole recipe (exact and near dedup across shards) is refused in one line saying why;
* a task cancelled mid-run (``scancel``), or its node lost: the finalize job fails in one line, status names the
  failed task with its log tail, ``--resume`` resubmits only the shards without a record and gives the clean
  rows.

Run by the nox session ``slurm`` (root; Debian's Slurm packages); skipped with the reason elsewhere.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from .conftest import ROOT
from .ray_helpers import assert_same_outputs
from .slurm_cluster import SlurmCluster, started, unavailable
from .w1_helpers import assert_same_run, inline_reference, write_w1
from .w1_helpers import w1_recipe as w1_file

pytest.importorskip("mdf_slurm")
pytestmark = pytest.mark.skipif(unavailable() is not None, reason=f"slurm cluster: {unavailable()}")

SLOW = [{"delay_refiner": {"seconds_per_batch": 1.0}}]  # rows unchanged; a task lives long enough to be killed


@pytest.fixture(scope="module")
def cluster() -> Iterator[SlurmCluster]:
    with started(nodes=2, max_array_size=3) as c:
        yield c


@pytest.fixture(scope="module")
def w1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_w1(tmp_path_factory.mktemp("slurm-array-w1"), rows=20_000, files=10, row_group_rows=2000)


def w1_recipe(tmp: Path, data: Path, extra_ops: list | None = None) -> Path:
    return w1_file(tmp, data, 1000, extra_ops)


@pytest.fixture(scope="module")
def w1_inline(cluster: SlurmCluster, w1: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return inline_reference(tmp_path_factory.mktemp("slurm-array-inline"), lambda t: w1_recipe(t, w1), cluster.mdf)


def test_w1_in_five_tasks_split_at_max_array_size_equals_the_inline_run(
    cluster: SlurmCluster, w1: Path, w1_inline: Path, tmp_path: Path
) -> None:
    folder = cluster.submit(str(w1_recipe(tmp_path, w1)), "--array", "5")
    run = cluster.wait_run(folder)
    assert [a["count"] for a in run["arrays"]] == [3, 2]  # MaxArraySize=3: ids 0-2, then 0-1 with an offset
    assert cluster.job_state(run["finalize"]).get("JobState") == "COMPLETED", _logs(folder)
    assert_same_run(tmp_path, w1_inline)
    success = json.loads((tmp_path / "out" / "_SUCCESS").read_text())
    assert sorted(f["name"] for f in success["files"]) == sorted(p.name for p in (tmp_path / "out").glob("*.parquet"))
    assert (tmp_path / "out" / "_mdf" / "report.html").exists()
    status = cluster.mdf("slurm", "status", str(folder))
    assert status.returncode == 0, status.stderr
    assert "shards: 10 of 10 done" in status.stdout and "0 failed" in status.stdout, status.stdout


def _logs(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace")[-1500:] for p in sorted((folder / "logs").glob("*.out")))


def test_the_commoncrawl_recipe_per_document_stages_equal_the_inline_run(cluster: SlurmCluster, tmp_path: Path) -> None:
    """Array mode runs the extraction part of examples/commoncrawl.yaml; the whole recipe, whose dedup stage keeps
    key state across shards, is refused in one line that names the operator and points at --nodes."""
    pytest.importorskip("fastwarc")
    from mdf_text.demo_warc import write_warc

    write_warc(str(tmp_path / "warc"), pages=240, seed=5)
    recipe = yaml.safe_load((ROOT / "examples" / "commoncrawl.yaml").read_text())
    recipe["reader"].update(paths=[str(tmp_path / "warc" / "*.warc.gz")], bytes_per_shard=200_000)
    recipe["stages"][0]["operators"][4]["url_filter"]["blocklist"] = str(ROOT / "examples" / "blocklist.txt")
    whole = tmp_path / "whole.yaml"
    whole.write_text(yaml.safe_dump(recipe))
    refused = cluster.mdf("slurm", "run", str(whole), "--array", "3")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "exact_dedup" in refused.stderr and "--nodes" in refused.stderr and "Traceback" not in refused.stderr
    recipe["stages"] = recipe["stages"][:1]
    paths = {}
    for name in ("inline", "array"):
        recipe["writer"]["path"] = str(tmp_path / f"{name}-out")
        recipe["rejected"]["path"] = str(tmp_path / f"{name}-rej")
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_text(yaml.safe_dump(recipe))
    out = cluster.mdf("run", "-q", str(paths["inline"]))
    assert out.returncode == 0, out.stderr[-3000:]
    folder = cluster.submit(str(paths["array"]), "--array", "3")
    cluster.wait_run(folder)
    assert (tmp_path / "array-out" / "_SUCCESS").exists(), _logs(folder)
    assert_same_outputs(tmp_path / "array-out", tmp_path / "inline-out")
    assert_same_outputs(tmp_path / "array-rej", tmp_path / "inline-rej")
    assert pq.read_table(tmp_path / "array-out").num_rows > 0


@pytest.mark.parametrize("fault", ["scancel", "node_lost"])
def test_a_task_killed_then_resume_gives_the_clean_rows(
    cluster: SlurmCluster, w1: Path, w1_inline: Path, tmp_path: Path, fault: str
) -> None:
    """Task 1 is cancelled (or its node loses every process) once it has committed a shard: the finalize job
    fails in one line naming the shards without a record, ``mdf slurm status`` names the failed task with its
    log tail, and ``--resume`` resubmits only the missing shards: the clean run's rows, metrics counts and all.
    Where the node is lost, Slurm may requeue the task instead (seen at load 10: its rerun redid the slice and the
    finalize published); then the rows must be the clean ones without a ``--resume``."""
    recipe = w1_recipe(tmp_path, w1, extra_ops=SLOW)
    folder = cluster.submit(str(recipe), "--array", "2")
    run = json.loads((folder / "run.json").read_text())
    task = f"{run['arrays'][0]['job']}_1"
    victim = _wait_for_a_record_of(cluster, task, tmp_path / "out", folder)
    if fault == "scancel":
        assert cluster.login("scancel", task).returncode == 0
    else:
        assert cluster.kill_node(victim) > 0
    cluster.wait_run(folder)
    if fault == "node_lost":
        cluster.start_slurmd(victim)
        cluster.wait_idle(120)
    final_log = (folder / "logs" / f"finalize-{run['finalize']}.out").read_text()
    if fault == "node_lost" and "have no completion record" not in final_log:
        # Slurm requeued the task of the dead node (JobRequeue) and its rerun redid the slice: the clean rows
        assert int(cluster.job_state(task).get("Restarts", "0")) > 0, (cluster.job_state(task), final_log)
        assert_same_run(tmp_path, w1_inline)
        return
    assert "shard(s) have no completion record" in final_log, final_log
    assert not (tmp_path / "out" / "_SUCCESS").exists()
    status = cluster.mdf("slurm", "status", str(folder))
    assert f"task {task}" in status.stdout and "  | " in status.stdout, status.stdout  # the failed task, its log
    assert "--resume" in status.stdout
    again = cluster.submit(str(recipe), "--array", "2", "--resume")
    rerun = cluster.wait_run(again)
    assert cluster.job_state(rerun["finalize"]).get("JobState") == "COMPLETED", _logs(again)
    resubmitted = [int(x) for line in (again / "slices.txt").read_text().split() for x in line.split(",")]
    assert 0 < len(resubmitted) < 10  # only shards without a record
    assert_same_run(tmp_path, w1_inline)


def _wait_for_a_record_of(cluster: SlurmCluster, task: str, out: Path, folder: Path) -> str:
    """Until ``task`` runs and the output holds a completion record from it; the node it runs on."""
    deadline = time.monotonic() + 300
    while True:
        info = cluster.job_state(task)
        records = list((out / "_mdf" / "shards").glob("*.json")) if (out / "_mdf" / "shards").exists() else []
        mine = [r for r in records if json.loads(r.read_text()).get("host") == info.get("NodeList")]
        if info.get("JobState") == "RUNNING" and mine:
            return info["NodeList"]
        assert info.get("JobState") in ("PENDING", "RUNNING"), (info, _logs(folder))
        assert time.monotonic() < deadline, _logs(folder)
        time.sleep(0.2)
