"""A local Ray that a run started stops without waiting on Ray's autoscaler (issue 30, the per-run overhead).

``ray.shutdown()`` stops a local Ray's processes one at a time, each given a second to exit on SIGTERM. The
autoscaler's monitor never exits in that second: it was 1.0 s of a 1.33 s shutdown on every run with a local Ray
(Ray 2.60, this machine). :func:`mdf.executor.placement.stop_local_ray` kills it first. The test runs in a child
process (a Ray of its own, apart from the modules' shared one) and checks the mechanism, not a time: the monitor
is gone when Ray's own shutdown starts, and no process of that Ray outlives the close.

Seen red: with the kill taken out of ``stop_local_ray``, ``monitor_alive_at_shutdown`` was true. (A plain
``ray.shutdown()`` took 1.3 s here, the close with the kill 0.1-0.3 s.)
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("ray")

CHILD = r"""
import json, time
import ray
from mdf.executor.placement import connect
from mdf.executor.ray_params import RayParams

session = connect(RayParams())
node = ray._private.worker._global_node
procs = {kind: [i.process for i in infos] for kind, infos in node.all_processes.items()}
seen = {}
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


def test_a_local_ray_stops_without_waiting_on_its_monitor():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert "monitor" in seen["kinds"], seen  # Ray still starts one: else this test checks nothing
    assert seen["monitor_alive_at_shutdown"] is False, seen
    assert seen["left"] == [], seen
