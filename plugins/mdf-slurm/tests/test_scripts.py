"""mdf-slurm's pieces that need no Slurm: slicing shards into tasks, splitting arrays at MaxArraySize, and the
batch scripts (valid bash, the options given, no fixed sleep). The runs themselves are tested against a real
Slurm in tests/test_slurm_*.py (the ``slurm`` nox session)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from mdf_slurm import runs, scripts


@pytest.mark.parametrize(("shards", "tasks"), [(10, 5), (10, 3), (7, 7), (3, 8), (1, 4), (1001, 10)])
def test_slices_cover_every_shard_once_in_order_and_none_is_empty(shards: int, tasks: int) -> None:
    parts = runs.split(list(range(shards)), tasks)
    assert [n for p in parts for n in p] == list(range(shards))
    assert len(parts) == min(tasks, shards) and all(parts)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1


@pytest.mark.parametrize(("count", "limit", "want"), [(5, 3, [(0, 3), (3, 2)]), (3, 3, [(0, 3)]),
                                                      (1, 1001, [(0, 1)]), (2500, 1001, [(0, 1001), (1001, 1001),
                                                                                          (2002, 498)])])  # fmt: skip
def test_arrays_split_at_max_array_size(count: int, limit: int, want: list[tuple[int, int]]) -> None:
    assert runs.arrays(count, limit) == want


def _job(tmp_path: Path) -> scripts.Job:
    return scripts.Job("mdf-w1", tmp_path / "run", tmp_path, tmp_path / "w 1.yaml", ["writer.path=o ut"], "debug",
                       "1:00:00", "lab", ["--mem=4G"])  # fmt: skip


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("which", ["allocation", "array_task", "finalize"])
def test_scripts_are_valid_bash_with_the_options_given(tmp_path: Path, which: str) -> None:
    job = _job(tmp_path)
    text = {"allocation": lambda: scripts.allocation(job, 3, ray_start_args="--num-gpus 0"),
            "array_task": lambda: scripts.array_task(job, tmp_path / "run" / "slices.txt", cpus=4),
            "finalize": lambda: scripts.finalize(job)}[which]()  # fmt: skip
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0
    for line in ("#SBATCH --partition=debug", "#SBATCH --time=1:00:00", "#SBATCH --account=lab", "#SBATCH --mem=4G"):
        assert line in text
    assert "'writer.path=o ut'" in text and f"'{tmp_path}/w 1.yaml'" in text  # quoted for the shell
    assert "sleep" not in text


def test_the_allocation_waits_for_every_node_and_stops_ray(tmp_path: Path) -> None:
    text = scripts.allocation(_job(tmp_path), 3)
    assert "#SBATCH --nodes=3" in text and "--exclusive" in text
    assert 'mdf_slurm.node wait --address "$address" --nodes "$SLURM_JOB_NUM_NODES"' in text
    assert "trap stop_ray EXIT" in text and "--set executor.type=ray" in text
