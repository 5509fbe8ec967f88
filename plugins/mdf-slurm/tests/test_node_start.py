"""A node's ``ray start`` runs with no stale ``ray_current_cluster`` file, and a failed one is tried again only
after what it left running is stopped.

CI's slurm session lost a requeued job so: every ``ray start --head`` of the requeued job on n1 failed with "Ray is
trying to start at ...:6379, but is already running". Ray refuses so while ``$RAY_TMPDIR/ray/ray_current_cluster``
names its address and a raylet anywhere on the machine names that GCS; the node's folder is named by the job id,
which a requeue keeps, so it held the killed first start's file, and in the test cluster (one process table for
all nodes) the other node's raylet named that GCS. The program below stands in for the ``ray`` command: its first
start writes that file, leaves a process behind (with the environment it was given, as Ray's processes have) and
exits 1; a later start fails while the process lives (exit 3) or the file is there (exit 4). Seen red with
``_stop_leftovers`` returning 0 at once (exit 3) and with the file left (exit 4).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mdf_slurm import node

FAKE_RAY = """\
import os, pathlib, subprocess, sys
tmp = pathlib.Path(os.environ["RAY_TMPDIR"])
attempts = tmp / "attempts"
n = int(attempts.read_text()) if attempts.exists() else 0
attempts.write_text(str(n + 1))
current = tmp / "ray" / "ray_current_cluster"
if n == 0:  # gives up on its own GCS, which stays behind (in a session of its own, as a daemon would)
    gcs = subprocess.Popen(["sleep", "300"], start_new_session=True)
    (tmp / "gcs.pid").write_text(str(gcs.pid))
    current.parent.mkdir(exist_ok=True)
    current.write_text("127.0.0.1:6379")
    sys.exit(1)
if current.exists():  # Ray refuses while the file names its address and a raylet (another node's) names that GCS
    sys.exit(4)
pid = (tmp / "gcs.pid").read_text()
try:
    state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
except OSError:
    state = "gone"
sys.exit(3 if state not in ("gone", "Z") else 0)  # "already running" while the first start's GCS lives
"""


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
def test_a_failed_start_is_tried_again_after_its_leftovers_are_stopped(tmp_path: Path, monkeypatch) -> None:
    ray = tmp_path / "ray"
    ray.write_text(f"#!{sys.executable}\n{FAKE_RAY}")
    ray.chmod(0o755)
    monkeypatch.setattr(node, "node_address", lambda: "127.0.0.1")
    for name, value in {"TMPDIR": str(tmp_path), "SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1",
                        "SLURM_CLUSTER_NAME": "t", "SLURM_CPUS_ON_NODE": "1"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        rc = node._ray_start(["--head"], "", ray=str(ray))
    finally:  # _ray_start forwards these to its child: give pytest its own back
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    folder = tmp_path / "mdf-ray-t-7-n1"
    assert rc == 0
    assert (folder / "attempts").read_text() == "2"
    pid = int((folder / "gcs.pid").read_text())
    assert not os.path.exists(f"/proc/{pid}") or node._state(pid) == "Z"


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
def test_clean_stops_what_is_left_of_the_nodes_ray_and_removes_its_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    """``python -m mdf_slurm.node clean`` (the job script's last step on every node after a run that succeeded)
    kills a process this job's Ray left on the node and removes ``$TMPDIR/mdf-ray-<cluster>-<job>-<node>``, and
    only that: another job's folder stays. Ray's sockets and session logs outlived every job before (the test
    and benchmark jobs here had left ~170 folders); a clean-up inside the Ray step ran too late, as Slurm
    SIGKILLs a cancelled step a few seconds after its SIGTERM. Seen red without the ``clean`` command (argparse
    refuses it) and with the removal left out (the folder and its log stay)."""
    for name, value in {"TMPDIR": str(tmp_path), "SLURM_JOB_ID": "8", "SLURMD_NODENAME": "n2",
                        "SLURM_CLUSTER_NAME": "t"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    folder, other = tmp_path / "mdf-ray-t-8-n2", tmp_path / "mdf-ray-t-9-n2"
    (folder / "ray" / "session_latest" / "logs").mkdir(parents=True)
    (folder / "ray" / "session_latest" / "logs" / "raylet.out").write_text("a log line")
    other.mkdir()
    env = {**os.environ, "RAY_TMPDIR": str(folder)}
    left = subprocess.Popen(["sleep", "300"], env=env, start_new_session=True)  # a raylet the step left behind
    try:
        assert node.main(["clean"]) == 0
        assert left.wait(timeout=10) == -signal.SIGKILL
    finally:
        left.kill()
    assert not folder.exists()
    assert other.exists()
    assert f"removed {folder}" in capsys.readouterr().out
