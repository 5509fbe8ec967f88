"""Joining a Ray cluster the way a user starts one, and what a killed driver leaves behind.

A head started with ``ray start --head --port P --node-ip-address 127.0.0.1`` plus a second node started with
``ray start --address``, both on loopback; ``mdf run`` (the installed command, in its own process) joins with
``executor.address: "127.0.0.1:P"``, ``address: auto`` and ``RAY_ADDRESS``, and its part files must equal the
inline executor's. A cluster that is not there is exit 2 and one line naming the address. Ray's temp dir is a
short folder of this test's own (``RAY_TMPDIR``), so "auto" finds this cluster and nothing else, and the
processes of a killed run can be found by their session path.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from .ray_helpers import assert_same_outputs, many_rows_parquet, text_recipe

pytest.importorskip("ray")
pytest.importorskip("mdf_text")

RAY = Path(sys.executable).with_name("ray")
MDF = Path(sys.executable).with_name("mdf")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


TOKEN = secrets.token_hex(32)  # Ray's token authentication, as a user's cluster has it
AUTH = ("token-file", "token-env", "off")
"""How the cluster's token authentication is set up, as users have it: ``token-file``, the token in
``~/.ray/auth_token`` and no ``RAY_AUTH_*`` variable (Ray's default once any head has started on the machine:
joining by address failed there, ``InvalidAuthToken``); ``token-env``, ``RAY_AUTH_MODE=token`` and
``RAY_AUTH_TOKEN`` in the environment; ``off``, no token anywhere."""


def _env(tmp: str, auth: str = "token-env", **extra: str) -> dict[str, str]:
    # as a user's shell has it: no RAY_ADDRESS, and none of the Ray settings this test session's conftest made
    drop = ("RAY_ADDRESS", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN")
    env = {k: v for k, v in os.environ.items() if k not in drop and k != "RAY_AUTH_TOKEN_PATH"}
    home = Path(tmp) / f"home-{auth}"  # a home of this test's own: the user's ~/.ray is never read or written
    (home / ".ray").mkdir(parents=True, exist_ok=True)
    ray = {"RAY_TMPDIR": tmp, "RAY_USAGE_STATS_ENABLED": "0", "HOME": str(home)}
    if auth == "token-env":
        ray.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=TOKEN)
    elif auth == "token-file":
        (home / ".ray" / "auth_token").write_text(TOKEN)
    return {**env, **ray, "COLUMNS": "200", **extra}


@pytest.fixture(scope="module", params=AUTH)
def cluster(request):
    """Head + one more node on 127.0.0.1, as `ray start` prints them; stopped (both) at the end."""
    auth = request.param
    tmp = tempfile.mkdtemp(prefix="mdfr-", dir="/tmp")  # unix socket paths under it must stay short
    port = _free_port()
    env = _env(tmp, auth)
    head = [str(RAY), "start", "--head", "--port", str(port), "--node-ip-address", "127.0.0.1"]
    head += ["--num-cpus", "1", "--include-dashboard", "false", "--disable-usage-stats"]
    out = subprocess.run(head, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    node = [str(RAY), "start", "--address", f"127.0.0.1:{port}", "--node-ip-address", "127.0.0.1", "--num-cpus", "1"]
    if auth == "token-file":  # `ray start --address` reads the file only when told to (Ray 2.60: as its docs say)
        env = {**env, "RAY_AUTH_MODE": "token"}
    out = subprocess.run(node, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    yield tmp, port, auth
    _stop_cluster(tmp)
    shutil.rmtree(tmp, ignore_errors=True)


def _stop_cluster(tmp: str) -> None:
    """Stop this cluster's processes only: those whose command line names its session under ``tmp`` (GCS,
    raylets, agents), and their descendants (workers rename themselves ``ray::...``, losing the path).

    ``ray stop --force`` would kill every Ray process of the machine: a user's own cluster, or another test
    run's (seen here: a parallel run's raylet died mid-run)."""
    parent: dict[int, int] = {}
    ours: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if tmp.encode() in (entry / "cmdline").read_bytes():
                ours.add(int(entry.name))
        except (OSError, IndexError, ValueError):  # gone meanwhile, or not ours to read
            continue
    while grown := {pid for pid, ppid in parent.items() if ppid in ours and pid not in ours}:
        ours |= grown
    ours.discard(os.getpid())
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in ours:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 10
        while sig == signal.SIGTERM and time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in ours):
            time.sleep(0.2)


@pytest.fixture(scope="module")
def inline_output(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inline")
    glob = many_rows_parquet(tmp / "in", files=3, rows=2000)
    recipe = text_recipe(tmp, {"type": "parquet", "paths": [glob]}, {"type": "inline"})
    path = tmp / "r.yaml"
    path.write_text(yaml.safe_dump(recipe))
    out = subprocess.run([str(MDF), "run", "-q", str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return glob, tmp


def _mdf_run(tmp: Path, glob: str, executor: dict, env: dict[str, str]) -> subprocess.CompletedProcess:
    recipe = text_recipe(tmp, {"type": "parquet", "paths": [glob]}, executor)
    path = tmp / "r.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return subprocess.run([str(MDF), "run", str(path)], env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("how", ["address", "auto", "RAY_ADDRESS"])
def test_joining_a_cluster_started_with_ray_start(cluster, inline_output, tmp_path, how):
    """Each way of naming the cluster, with its token authentication each way users have it (joining by the
    printed address or RAY_ADDRESS with the token in ~/.ray/auth_token failed: seen, InvalidAuthToken after 20 s
    of Ray's retries and "cannot join the Ray cluster"; `auto` passed)."""
    ray_tmp, port, auth = cluster
    glob, inline_tmp = inline_output
    executor, env = {"type": "ray"}, _env(ray_tmp, auth)
    if how == "address":
        executor["address"] = f"127.0.0.1:{port}"
    elif how == "auto":
        executor["address"] = "auto"
    else:
        executor = {}  # no type: RAY_ADDRESS alone picks Ray
        env["RAY_ADDRESS"] = f"127.0.0.1:{port}"
    out = _mdf_run(tmp_path, glob, executor, env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "executor: ray (cluster at" in out.stderr
    assert "WARNING" not in out.stderr and "core_worker" not in out.stderr  # Ray's lines go to Ray's logs
    assert_same_outputs(tmp_path / "out", inline_tmp / "out")


WORKER_ENV_CHILD = r"""
import json, os, sys
os.environ.update(OPENBLAS_NUM_THREADS="3", MIMALLOC_ARENA_EAGER_COMMIT="0", MIMALLOC_PURGE_DECOMMITS="0")  # as `mdf`
from mdf.executor.ray.session import WORKER_ENV, connect
from mdf.executor.ray.params import RayParams
session = connect(RayParams(address=sys.argv[1]))
import ray
@ray.remote(num_cpus=0)
def seen():
    return [os.environ.get(k) for k in WORKER_ENV]
print(json.dumps(ray.get(seen.remote())))
session.close()
"""


def test_a_joined_clusters_workers_get_the_drivers_allocator_settings(cluster):
    """A cluster's workers have the environment of the shell that ran `ray start`, not the driver's: the
    settings `mdf` makes before pyarrow loads mimalloc did not reach them, and W1 1 M joined to a `ray start`
    head ran at a median 9.47 s against 8.89 s with them. Seen red without the job's runtime_env: the worker had
    neither variable (the cluster's shell had none); and, before ``MIMALLOC_PURGE_DECOMMITS`` joined
    ``WORKER_ENV``, without that one."""
    ray_tmp, port, auth = cluster
    env = {k: v for k, v in _env(ray_tmp, auth).items() if not k.startswith(("OPENBLAS_", "MIMALLOC_"))}
    out = subprocess.run([sys.executable, "-c", WORKER_ENV_CHILD, f"127.0.0.1:{port}"], env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["3", "0", "0"]


def test_a_cluster_that_is_not_there_is_exit_2_naming_the_address(tmp_path, inline_output):
    glob, _ = inline_output
    port = _free_port()
    start = time.monotonic()
    out = _mdf_run(
        tmp_path,
        glob,
        {"type": "ray", "address": f"127.0.0.1:{port}", "connect_timeout_s": 3},
        _env(tempfile.mkdtemp(prefix="mdfr-", dir="/tmp")),
    )
    assert out.returncode == 2, out.stderr[-3000:]
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"127.0.0.1:{port}" in errors[0], out.stderr[-3000:]
    assert "Traceback" not in out.stderr
    assert time.monotonic() - start < 90


def _processes_under(path: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
            status = (entry / "status").read_text()
        except OSError:
            continue
        if path.encode() in cmd and "State:\tZ" not in status:
            pids.append(int(entry.name))
    return pids


def test_no_ray_process_outlives_a_killed_driver_by_more_than_seconds(inline_output, tmp_path):
    """SIGKILL of `mdf run` while its local Ray starts its actors: Ray's processes follow within seconds. The
    recipe sleeps 0.5 s a batch (~15 s of work), so the run is still going when it is killed on any machine.

    Seen red (24 s) when the kill found actor workers still starting: each tried the dead GCS four times with
    Ray's 5 s connect timeout; a local Ray now gets 2 s (``RAY_gcs_rpc_server_connect_timeout_s``), 11 s in all."""
    glob, _ = inline_output
    ray_tmp = tempfile.mkdtemp(prefix="mdfk-", dir="/tmp")
    slow = [{"delay_refiner": {"seconds_per_batch": 0.5}}]
    recipe = text_recipe(tmp_path, {"type": "parquet", "paths": [glob]}, {"type": "ray", "batch_rows": 200}, slow)
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(recipe))
    proc = subprocess.Popen([str(MDF), "run", "-q", str(path)], env=_env(ray_tmp), stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any("raylet" in p.name for p in Path(ray_tmp).rglob("raylet*")):
        time.sleep(0.2)
    time.sleep(1.0)  # Ray is up and starting actors
    assert _processes_under(ray_tmp), "Ray did not start"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = time.monotonic()
    while _processes_under(ray_tmp) and time.monotonic() - killed < 30:
        time.sleep(0.5)
    left = _processes_under(ray_tmp)
    for pid in left:  # do not leak them into the rest of the session
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} Ray process(es) still alive 30 s after the driver was killed"
    assert time.monotonic() - killed < 20, f"Ray's processes took {time.monotonic() - killed:.0f} s to exit"
    shutil.rmtree(ray_tmp, ignore_errors=True)
