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


STOPPED_RAY = """\
import os, pathlib, signal, sys, time
tmp = pathlib.Path(os.environ["RAY_TMPDIR"])
(tmp / "session_latest").mkdir(parents=True)
(tmp / "session_latest" / "raylet.out").write_text("a log line")
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
os.kill(os.getppid(), signal.SIGTERM)  # the job script's end: it stops the step, which passes it on to Ray
time.sleep(30)
sys.exit(5)
"""


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
def test_a_node_stopped_by_its_job_removes_its_ray_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    """A node whose Ray the job stopped (SIGTERM, passed on) removes ``$TMPDIR/mdf-ray-...``: Ray's sockets and
    session logs, tens of MB a node, would outlive the job on a compute node's ``/tmp`` (the test suite's runs had
    left hundreds). One that ended on its own keeps it and names it (the test above: its folder is read after).
    Seen red before ``_clean_up``: the folder and its log were still there."""
    ray = tmp_path / "ray"
    ray.write_text(f"#!{sys.executable}\n{STOPPED_RAY}")
    ray.chmod(0o755)
    monkeypatch.setattr(node, "node_address", lambda: "127.0.0.1")
    for name, value in {"TMPDIR": str(tmp_path), "SLURM_JOB_ID": "8", "SLURMD_NODENAME": "n2",
                        "SLURM_CLUSTER_NAME": "t", "SLURM_CPUS_ON_NODE": "1"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        rc = node._ray_start(["--head"], "", ray=str(ray))
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert rc == 0
    assert not (tmp_path / "mdf-ray-t-8-n2").exists()
    assert f"removed {tmp_path / 'mdf-ray-t-8-n2'}" in capsys.readouterr().out
