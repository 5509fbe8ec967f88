"""What an allocation-mode job runs on its nodes: ``python -m mdf_slurm.node ip | head | worker | wait``.

* ``ip``: this node's address on the cluster network, the one Slurm itself reaches it by (the node's
  ``NodeAddr``, resolved), so Ray's head is reachable from every node of the allocation; Ray's own guess (the
  route to 8.8.8.8) names the wrong interface, or none, on compute nodes without a default route.
* ``head`` / ``worker``: ``ray start --block`` with what Slurm gave this node: ``--num-cpus`` its
  ``SLURM_CPUS_ON_NODE``, a temp folder of its own (``$TMPDIR/mdf-ray-<cluster>-<job>-<node>``: compute nodes
  that share ``/tmp`` over a network file system, or one machine hosting several test clusters whose job ids
  both start at 1, never mix two nodes' sockets; removed by ``clean`` after a run that succeeded), no
  dashboard, no usage stats. ``--block`` keeps every Ray process a child of the ``srun`` step, so Slurm
  tracks them and ends them with the job, and a SIGTERM (the job script's end) shuts the node down cleanly.
  A start that fails early is tried again (:func:`_ray_start` says why).
* ``clean``: this job's Ray folder on this node removed (:func:`clean` says why and when).
* ``wait``: until the head's GCS answers and ``--nodes`` nodes are alive, polling (no fixed sleep); fails in one
  line after ``--timeout`` seconds or as soon as a Ray step exited (``--step-pid``), and prints how long after
  the job's start (``MDF_SLURM_STARTED``) Ray was ready.

Ray is imported only by ``wait`` (the others run the ``ray`` command), so a node's start costs no Ray import of
ours.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

PREFIX = "mdf-slurm:"
RAY_PORT = 6379
START_ATTEMPTS = 3
# What a Ray node on an allocation leaves out, because nothing mdf runs reads it and each costs CPU on every node
# (one node, W1 200,000 rows, per-process CPU sampled from /proc: 17.5 -> 12.8 CPU-s in all): the log monitor
# (~1.0 CPU-s a node: it streams workers' output to drivers, and mdf's driver sets `log_to_driver=False`) and,
# through LEAN_ENV, the idle workers a raylet starts for the first driver (~0.95 CPU-s each, one per CPU: the
# `wait` step below is that first driver, and mdf's actors start their own). The head also leaves out the
# autoscaler monitor (`--no-monitor`, ~0.9 CPU-s: an allocation's nodes are fixed). `--ray-start-args` come
# after these, so a user can turn the log monitor back on.
LEAN_ARGS = ("--include-log-monitor", "false")
LEAN_ENV = {"RAY_prestart_worker_first_driver": "0"}
STARTUP_S = 180.0  # a `ray start --block` that ends sooner than this failed to start


def node_address() -> str:
    """The address Slurm reaches this node by (``NodeAddr`` of ``SLURMD_NODENAME``), as an IP."""
    name = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    out = subprocess.run(["scontrol", "show", "node", "-o", name], capture_output=True, text=True, timeout=60)
    found = re.search(r"\bNodeAddr=(\S+)", out.stdout)
    addr = found.group(1) if found else name
    return socket.gethostbyname(addr)


def _ray_start(args: list[str], extra: str, ray: str | None = None) -> int:
    """``ray start --block ARGS`` until the job stops it (SIGTERM, passed on); a start that fails within
    :data:`STARTUP_S` is tried again, up to :data:`START_ATTEMPTS` times in all.

    Why again: Ray 2.60's raylet gives its Python helpers 15 s, hard-coded, to report their ports and aborts
    when one misses it ("Timed out waiting for file .../metrics_agent_port"). A busy node, or one importing Ray
    from a slow shared file system, misses it: seen here at load 12-25 on two cores, the dashboard agent took
    37-60 s to import. The next attempt finds the page cache warm.

    Before every start the folder's ``ray_current_cluster`` file is removed, as ``ray stop`` removes it (the
    comment in the loop says why): with it left, every start of a requeued job's head was refused "Ray is ...
    already running at <ip>:6379" and the job died (CI). Before a retry, what the failed attempt left running is
    killed too (:func:`_stop_leftovers`), so that a start that fails after its GCS came up cannot hold the port
    against the next one; the CI runs that showed the file's refusal had no such leftovers (0 killed)."""
    node = _node_name()
    tmp = _node_folder()
    tmp.mkdir(parents=True, exist_ok=True)
    cpus = os.environ.get("SLURM_CPUS_ON_NODE") or str(os.cpu_count() or 1)
    ray = ray or str(Path(sys.executable).with_name("ray"))  # a test passes its own program
    cmd = [ray, "start", "--block", *args, "--node-ip-address", node_address(), "--num-cpus", cpus,
           "--disable-usage-stats", *LEAN_ARGS, *extra.split()]  # fmt: skip
    env = {**os.environ, "RAY_TMPDIR": str(tmp), "RAY_USAGE_STATS_ENABLED": "0", **LEAN_ENV}
    print(f"{PREFIX} {node}: {' '.join(cmd)}", flush=True)
    child: list[subprocess.Popen[bytes]] = []
    stopping = []

    def forward(signum: int, _frame: object) -> None:
        stopping.append(signum)
        if child and child[-1].poll() is None:
            child[-1].send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for attempt in range(1, START_ATTEMPTS + 1):
        # The file names the GCS of an earlier start in this folder: a failed attempt's, or (the folder is named by
        # the job id, which a requeue keeps) the killed first start's of a requeued job. `ray start --head` refuses
        # ("already running") while it names its address and any raylet on the machine names that GCS (seen in
        # the test cluster, whose nodes share one process table: the other node's raylet did); `ray stop` removes
        # it too.
        (tmp / "ray" / "ray_current_cluster").unlink(missing_ok=True)
        began = time.monotonic()
        child.append(subprocess.Popen(cmd, env=env))
        rc = child[-1].wait()
        took = time.monotonic() - began
        if stopping:
            return 0
        if rc == 0 or took > STARTUP_S or attempt == START_ATTEMPTS:
            print(f"{PREFIX} {node}: Ray ended on its own; its logs are kept in {tmp}", flush=True)
            return rc
        left = _stop_leftovers(tmp)
        print(f"{PREFIX} {node}: `ray start` failed (exit {rc}) {took:.0f} s in; stopped {left} process(es) it "
              f"left; starting it again ({attempt + 1} of {START_ATTEMPTS})", flush=True)  # fmt: skip
    return 1


def _node_name() -> str:
    return os.environ.get("SLURMD_NODENAME", socket.gethostname())


def _node_folder() -> Path:
    """This job's Ray folder on this node: ``$TMPDIR/mdf-ray-<cluster>-<job>-<node>``."""
    job, cluster = os.environ.get("SLURM_JOB_ID", "nojob"), os.environ.get("SLURM_CLUSTER_NAME", "slurm")
    return Path(os.environ.get("TMPDIR") or "/tmp") / f"mdf-ray-{cluster}-{job}-{_node_name()}"


def clean() -> int:
    """``clean``: stop what is left of this job's Ray on this node and remove its folder; the job script runs it
    on every node, as a step of its own, after its Ray steps ended and only when the run succeeded.

    Why: each job's Ray writes its sockets, session logs and any spilled objects there (~0.4 MB on the head for a
    two-minute W1 run here; spilled objects can be GBs), and ``/tmp`` on a compute node outlives the job unless
    the site gives each job a private one: the test suite's and benchmarks' jobs here had left ~170 of these
    folders. Not done by the Ray step itself when it is stopped: Slurm cancels a step by SIGTERM and, a few
    seconds later (``KillWait``), SIGKILL, which ended the steps here before Ray had shut down. A failed run
    keeps its folders, named in the job log: their logs tell why."""
    tmp = _node_folder()
    _stop_leftovers(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{PREFIX} {_node_name()}: removed {tmp}", flush=True)
    return 0


def _stop_leftovers(tmp: Path, grace_s: float = 10.0) -> int:
    """SIGKILL every process whose environment has ``RAY_TMPDIR`` = ``tmp`` (what one start of this node's Ray
    spawned: the folder is this job's and this node's alone, and every Ray process inherits the variable, also
    one that left the start's process group), and wait until they are gone, so their ports are free again.
    Returns how many there were. Processes of other users are not readable, and not ours to kill."""
    mark = b"\0RAY_TMPDIR=" + bytes(tmp) + b"\0"
    found = []
    for pid in (int(n) for n in os.listdir("/proc") if n.isdigit()):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if mark in b"\0" + f.read() + b"\0":
                    os.kill(pid, signal.SIGKILL)
                    found.append(pid)
        except OSError:
            continue
    deadline = time.monotonic() + grace_s
    while _alive(found) and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(found)


def _alive(pids: list[int]) -> list[int]:
    return [p for p in pids if os.path.exists(f"/proc/{p}") and _state(p) != "Z"]


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def wait(address: str, nodes: int, timeout_s: float, step_pids: list[int]) -> int:
    """Until ``nodes`` Ray nodes are alive at ``address``; 0, or 1 with one line saying why not."""
    began = time.monotonic()
    host, port = address.rsplit(":", 1)

    def failed(why: str) -> int:
        print(f"{PREFIX} error: Ray did not come up: {why}", file=sys.stderr, flush=True)
        return 1

    import ray

    while True:
        if len(_alive(step_pids)) < len(step_pids):
            return failed("a `ray start` step exited (its lines above say why)")
        if time.monotonic() - began > timeout_s:
            return failed(f"no Ray head answered at {address} in {timeout_s:.0f} s")
        try:  # the head's GCS port first: cheap, where ray.init would wait out its own long timeout
            socket.create_connection((host, int(port)), timeout=1).close()
            ray.init(address=address, logging_level="ERROR", log_to_driver=False)
            break
        except (OSError, ConnectionError, RuntimeError):  # not up yet, or a head start tried again
            time.sleep(0.2)
    try:
        while (alive := sum(1 for n in ray.nodes() if n.get("Alive"))) < nodes:
            if len(_alive(step_pids)) < len(step_pids):
                return failed(f"a `ray start` step exited with {alive} of {nodes} nodes joined")
            if time.monotonic() - began > timeout_s:
                return failed(f"{alive} of {nodes} nodes joined after {timeout_s:.0f} s")
            time.sleep(0.2)
        cpus = ray.cluster_resources().get("CPU", 0)
    finally:
        ray.shutdown()
    started = float(os.environ.get("MDF_SLURM_STARTED", "nan"))
    print(f"{PREFIX} Ray ready at {address}: {nodes} node(s), {cpus:g} CPUs, {time.time() - started:.1f} s after "
          "the job started", flush=True)  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mdf_slurm.node", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    sub.add_parser("ip")
    head = sub.add_parser("head")
    head.add_argument("--port", type=int, default=RAY_PORT)
    head.add_argument("--ray-start-args", default="")
    worker = sub.add_parser("worker")
    worker.add_argument("--address", required=True)
    worker.add_argument("--ray-start-args", default="")
    w = sub.add_parser("wait")
    w.add_argument("--address", required=True)
    w.add_argument("--nodes", type=int, required=True)
    w.add_argument("--timeout", type=float, default=300.0)
    w.add_argument("--step-pid", type=int, action="append", default=[])
    sub.add_parser("clean")
    args = ap.parse_args(argv)
    if args.what == "ip":
        print(node_address())
    elif args.what == "clean":
        return clean()
    elif args.what == "head":
        head = ["--head", "--port", str(args.port), "--include-dashboard", "false", "--no-monitor"]
        return _ray_start(head, args.ray_start_args)
    elif args.what == "worker":
        return _ray_start(["--address", args.address], args.ray_start_args)
    else:
        return wait(args.address, args.nodes, args.timeout, args.step_pid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
