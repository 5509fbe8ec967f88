"""Issue 51: what ``mdf slurm run`` refuses before submitting, each in one line with exit 2 and nothing queued.

Against a real Slurm (:mod:`tests.slurm_cluster`): a partition the cluster lacks, a machine without ``sbatch``,
a controller that does not answer (``slurmctld`` stopped),
a recipe with a bad value, and neither or both of ``--nodes``/``--array``.

Run by the nox session ``slurm`` (root; Debian's Slurm packages); skipped with the reason elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from .ray_helpers import many_rows_parquet, text_recipe
from .slurm_cluster import SlurmCluster, started, unavailable

pytest.importorskip("mdf_slurm")
pytestmark = pytest.mark.skipif(unavailable() is not None, reason=f"slurm cluster: {unavailable()}")

MDF = str(Path(sys.executable).with_name("mdf"))


@pytest.fixture(scope="module")
def cluster() -> Iterator[SlurmCluster]:
    with started(nodes=2) as c:
        yield c


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    many_rows_parquet(tmp_path / "in", files=2, rows=100)
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(text_recipe(tmp_path, {"type": "parquet", "paths": [str(tmp_path / "in")]},
                                               {"type": "inline"})))  # fmt: skip
    return path


def _one_line(out: subprocess.CompletedProcess, *words: str) -> str:
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out.stderr, out.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _queue_empty(cluster: SlurmCluster) -> None:
    assert not cluster.login("squeue", "-h").stdout.strip()


def test_a_wrong_partition_fails_in_one_line_naming_the_ones_there_are(
    cluster: SlurmCluster, recipe: Path, tmp_path: Path
) -> None:
    out = cluster.mdf("slurm", "run", str(recipe), "--nodes", "2", "--partition", "gpu-big")
    _one_line(out, "'gpu-big'", "debug (default)")
    _queue_empty(cluster)
    assert not (tmp_path / "out").exists()


def test_a_missing_sbatch_fails_in_one_line(cluster: SlurmCluster, recipe: Path, tmp_path: Path) -> None:
    """PATH with this environment's scripts only: ``mdf`` is there, Slurm's commands are not."""
    env = {**cluster.env(), "PATH": str(Path(sys.executable).parent)}
    out = cluster.login(MDF, "slurm", "run", str(recipe), "--nodes", "2", env=env)
    _one_line(out, "`sbatch` is not on PATH", "slurm-client")
    _queue_empty(cluster)


def test_an_unreachable_controller_fails_in_one_line(recipe: Path) -> None:
    """A cluster of its own whose slurmctld is stopped: the login node's clients get no answer (connection
    refused, retried for MessageTimeout)."""
    with started(nodes=1) as lone:
        lone.stop_controller()
        out = lone.mdf("slurm", "run", str(recipe), "--nodes", "1")
        _one_line(out, "controller does not answer", "scontrol ping")


def test_a_bad_recipe_fails_before_slurm_is_asked(cluster: SlurmCluster, recipe: Path) -> None:
    out = cluster.mdf("slurm", "run", str(recipe), "--nodes", "2", "--set", "stages[1].operators[0].min_length=-5")
    _one_line(out, "stages[1].operators[0]")
    _queue_empty(cluster)


def test_nodes_or_array_exactly_one(cluster: SlurmCluster, recipe: Path) -> None:
    out = cluster.mdf("slurm", "run", str(recipe))
    assert out.returncode == 2 and "exactly one of --nodes N" in out.stderr, out.stderr
    out = cluster.mdf("slurm", "run", str(recipe), "--nodes", "2", "--array", "2")
    assert out.returncode == 2 and "exactly one of --nodes N" in out.stderr, out.stderr


def test_array_mode_into_a_non_empty_output_is_refused_in_one_line(cluster: SlurmCluster, recipe: Path,
                                                                    tmp_path: Path) -> None:  # fmt: skip
    """``--array`` into an output that holds files, without ``--resume``: exit 2 in one line naming ``--resume``,
    nothing submitted, the files left alone. Seen red with the check taken out of ``mdf.slice_plan``: exit 0,
    "submitted ...: 2 shard(s) in 2 task(s); array job(s) 1 (tasks 0-1); finalize job 2 after them"."""
    (tmp_path / "out").mkdir(exist_ok=True)
    (tmp_path / "out" / "mine.parquet").write_bytes(b"not mdf's")
    out = cluster.mdf("slurm", "run", str(recipe), "--array", "2")
    _one_line(out, "is not empty", "--resume")
    _queue_empty(cluster)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["mine.parquet"]


def test_no_slurm_process_outlives_the_cluster() -> None:
    """The harness stops exactly what it started: after close(), no namespace, folder or process of it."""
    with started(nodes=1) as c:
        names = [n.ns for n in c.hosts]
        root = c.root
        pids = [p for n in c.hosts for p in n.pids()]
        assert pids and c.started_s < 60
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(n in listed for n in names)
    assert not root.exists()
    assert not [p for p in pids if os.path.exists(f"/proc/{p}")]
