"""A local Ray that a run starts and stops, without the seconds Ray waits for nothing (issue 30, per-run overhead).

* **Stop.** ``ray.shutdown()`` stops a local Ray's processes one at a time, each given a second to exit on
  SIGTERM. The autoscaler's monitor never exits in that second: it was 1.0 s of a 1.33 s shutdown on every run
  with a local Ray (Ray 2.60, this machine). :func:`mdf.executor.ray.session.stop_local_ray` kills it first. The
  test checks the mechanism, not a time: the monitor is gone when Ray's own shutdown starts, and no process of
  that Ray outlives the close. Seen red: with the kill taken out of ``stop_local_ray``,
  ``monitor_alive_at_shutdown`` was true. (A plain ``ray.shutdown()`` took 1.3 s here, the close with the kill
  0.1-0.3 s.)
* **Start.** The raylet's first connection to its object store races the store's thread and, when it loses,
  waits Ray's retry interval of a second (5 of 17 starts here). mdf's local Ray retries every 0.1 s
  (:data:`mdf.executor.ray.session.FAST_CONNECT`, the same 10 s budget). The test reads the raylet's environment:
  Ray's settings reach its processes only that way. Seen red with the settings left out of ``_ray_environment``:
  the raylet had neither variable.

Both run in a child process: a Ray of its own, apart from the modules' shared one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("ray")

CHILD = r"""
import json, time
from mdf.executor.ray.session import connect
from mdf.executor.ray.params import RayParams

session = connect(RayParams())  # imports Ray after setting Ray's environment, as a run does
import ray
node = ray._private.worker._global_node
procs = {kind: [i.process for i in infos] for kind, infos in node.all_processes.items()}
seen = {}
with open(f"/proc/{procs['raylet'][0].pid}/environ", "rb") as f:
    env = dict(x.split(b"=", 1) for x in f.read().split(b"\0") if b"=" in x)
seen["raylet_env"] = {k.decode(): v.decode() for k, v in env.items() if k.startswith(b"RAY_raylet_client")}
real_shutdown = ray.shutdown
def shutdown(*a, **k):
    seen["monitor_alive_at_shutdown"] = any(p.poll() is None for p in procs.get("monitor", []))
    return real_shutdown(*a, **k)
ray.shutdown = shutdown
t = time.perf_counter()
session.close()
seen["close_s"] = round(time.perf_counter() - t, 3)
seen["kinds"] = sorted(procs)
seen["left"] = [kind for kind, ps in procs.items() for p in ps if p.poll() is None]  # this process started them
print(json.dumps(seen))
"""


@pytest.fixture(scope="module")
def seen() -> dict:
    """What the child saw of a local Ray that ``connect`` started and ``close`` stopped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_raylet_client")}  # the test's own
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_local_ray_stops_without_waiting_on_its_monitor(seen):
    assert "monitor" in seen["kinds"], seen  # Ray still starts one: else this test checks nothing
    assert seen["monitor_alive_at_shutdown"] is False, seen
    assert seen["left"] == [], seen


def test_a_local_ray_retries_its_connections_every_tenth_of_a_second(seen):
    from mdf.executor.ray.session import FAST_CONNECT

    assert seen["raylet_env"] == FAST_CONNECT, seen["raylet_env"]
