"""A Ray cluster on separate network hosts, on one machine: Linux network namespaces joined by a bridge.

Why namespaces: two raylets on 127.0.0.1 share one network stack, so nothing in the tests ever crossed a real
link, was cut off from the head, or lost a node's whole process tree at once. Here every node is its own
network host with its own address, loopback and ports; a node is killed by killing every process in its
namespace, and cut off by setting its link down.

Layout (all made by :class:`NetnsCluster`, named ``mdfc-<id>-*``, nothing else touched):

* a *switch* namespace holding the bridge ``br0``; each node's veth pair is created inside it with the peer
  moved into the node, so the machine's own namespace gets no interface, no address and no route;
* ``head``: ``10.77.0.1``, ``ray start --head --num-cpus 0`` (the GCS and no work), where the driver
  (``mdf run``) runs too;
* with ``s3=True``, a SeaweedFS S3 server (:class:`tests.storage_servers.SeaweedS3`) on the head's address,
  started before Ray so every node's environment carries the standard AWS variables naming it: workers reach it
  through the bridge only, as worker machines reach a bucket over the network;
* ``w1``, ``w2``, ...: ``10.77.0.<2+i>``, ``ray start --address`` with one CPU each, pinned with ``taskset`` to
  core ``i mod cores``, so on a two-core machine each worker has a core of its own, and a custom resource
  ``node_w1``, ``node_w2``, ... of 1 that a recipe's ``resources: {custom: {node_w1: 1}}`` pins a stage to.

The subnet is the same for every cluster: each cluster's namespaces see only each other (no route leaves the
bridge), so two clusters (two test runs) never meet. Ray's token authentication is on, with a token of the
cluster's own. :meth:`close` kills exactly the processes inside the cluster's namespaces, then deletes them;
it runs on a failed test too (the fixture's ``finally``) and at interpreter exit.

Needs root and ``ip`` (iproute2); :func:`unavailable` says why not, for a skip.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SUBNET = "10.77.0"
HEAD_PORT = 6379
BIN = Path(sys.executable).parent


def unavailable() -> str | None:
    """Why this machine cannot host the cluster (not root, no iproute2, namespaces refused), else ``None``."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None or shutil.which("taskset") is None:
        return "needs iproute2's `ip` and util-linux's `taskset`"
    probe = f"mdfc-probe-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"`ip netns add` refused: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args: str, ns: str | None = None) -> None:
    cmd = ["ip", "netns", "exec", ns, "ip", *args] if ns else ["ip", *args]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {out.stderr.strip()}")


@dataclass
class Node:
    name: str
    ns: str
    address: str
    core: int | None  # the CPU the node's processes are pinned to; None: not pinned (the head)
    tmp: Path

    def command(self, *cmd: str) -> list[str]:
        """``cmd`` run inside this node's namespace (and on its core)."""
        pin = ["taskset", "-c", str(self.core)] if self.core is not None else []
        return ["ip", "netns", "exec", self.ns, *pin, *cmd]

    def pids(self) -> list[int]:
        out = subprocess.run(["ip", "netns", "pids", self.ns], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]


def add_hosts(
    nodes: list[Node], switch: str, prefix: str, names: list[str], subnet: str, root: Path, cores: list[int | None]
) -> None:
    """Hosts ``names`` on a bridge in namespace ``switch`` (made here): ``<prefix>-<name>`` namespaces with
    addresses ``<subnet>.1``, ``.2``, ..., each with a temp folder ``root/<name>`` and pinned to ``cores[i]``,
    appended to ``nodes`` as each is made (so a failure half-way still leaves them all for :func:`remove_hosts`).
    Shared by this cluster and the Slurm one (:mod:`tests.slurm_cluster`)."""
    _ip("netns", "add", switch)
    _ip("link", "add", "br0", "type", "bridge", ns=switch)
    _ip("link", "set", "br0", "up", ns=switch)
    for i, name in enumerate(names):
        node = Node(name, f"{prefix}-{name}", f"{subnet}.{i + 1}", cores[i], root / name)
        node.tmp.mkdir(parents=True, exist_ok=True)
        nodes.append(node)
        _ip("netns", "add", node.ns)
        _ip("link", "add", f"v-{name}", "type", "veth", "peer", "name", "eth0", "netns", node.ns, ns=switch)
        _ip("link", "set", f"v-{name}", "master", "br0", ns=switch)
        _ip("link", "set", f"v-{name}", "up", ns=switch)
        _ip("link", "set", "lo", "up", ns=node.ns)
        _ip("addr", "add", f"{node.address}/24", "dev", "eth0", ns=node.ns)
        _ip("link", "set", "eth0", "up", ns=node.ns)


def remove_hosts(nodes: list[Node], switch: str) -> None:
    """Kill the processes inside ``nodes``' namespaces (only those: SIGTERM, 10 s, SIGKILL), delete the
    namespaces and the ``switch``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = [p for n in nodes for p in n.pids()]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 10
        while sig == signal.SIGTERM and pids and time.monotonic() < deadline:
            if not any(Path(f"/proc/{p}").exists() for p in pids):
                break
            time.sleep(0.2)
    for ns in [n.ns for n in nodes] + [switch]:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@dataclass
class NetnsCluster:
    """A head and ``workers`` one-CPU worker nodes, each a network host of its own (see the module doc)."""

    workers: int = 2
    object_store_bytes: int = 300 * 1024 * 1024
    id: str = field(default_factory=lambda: secrets.token_hex(3))
    token: str = field(default_factory=lambda: secrets.token_hex(32))
    nodes: list[Node] = field(default_factory=list)
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="mdfc-", dir="/tmp")))
    s3: bool = False
    seaweed: Any = None  # the SeaweedS3 started with s3=True

    @property
    def switch(self) -> str:
        return f"mdfc-{self.id}-sw"

    @property
    def head(self) -> Node:
        return self.nodes[0]

    @property
    def address(self) -> str:
        """What ``ray start --head`` prints to join: the recipe's ``executor.address``."""
        return f"{self.head.address}:{HEAD_PORT}"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of every process of the cluster: the token, no setting of the test session's own."""
        drop = ("RAY_ADDRESS", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_AUTH_TOKEN_PATH")
        env = {k: v for k, v in os.environ.items() if k not in drop}
        s3 = self.seaweed.endpoint.env() if self.seaweed is not None else {}
        return {**env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token, "RAY_USAGE_STATS_ENABLED": "0",
                "COLUMNS": "200", **s3, **extra}  # fmt: skip

    def node_env(self, node: Node) -> dict[str, str]:
        """A node's own temp folders: Ray's, and mdf's working folders of ``s3://`` outputs (a machine's disk)."""
        return self.env(RAY_TMPDIR=str(node.tmp), MDF_CACHE_DIR=str(node.tmp / "mdf-cache"))

    def start(self, timeout_s: float = 240) -> NetnsCluster:
        atexit.register(self.close)
        try:
            self._network()
            if self.s3:
                from tests.storage_servers import SeaweedS3

                self.seaweed = SeaweedS3(self.root / "s3", host=self.head.address, prefix=tuple(self.head.command()))
                self.seaweed.start()
            self._ray(timeout_s)
        except BaseException:
            self.close()
            raise
        return self

    def _network(self) -> None:
        names = ["head", *(f"w{i}" for i in range(1, self.workers + 1))]
        cores = os.cpu_count() or 1
        add_hosts(self.nodes, self.switch, f"mdfc-{self.id}", names, SUBNET, self.root,
                  [None, *((i - 1) % cores for i in range(1, self.workers + 1))])  # fmt: skip

    def _ray(self, timeout_s: float) -> None:
        ray = str(BIN / "ray")
        common = ["--node-ip-address", "--disable-usage-stats", "--object-store-memory"]
        head = self.head
        cmd = [ray, "start", "--head", "--port", str(HEAD_PORT), common[0], head.address, "--num-cpus", "0",
               "--include-dashboard", "false", common[1], common[2], str(self.object_store_bytes)]  # fmt: skip
        self._run(head, cmd, timeout_s)
        for node in self.nodes[1:]:
            cmd = [ray, "start", "--address", self.address, common[0], node.address, "--num-cpus", "1", common[1],
                   common[2], str(self.object_store_bytes), "--resources", f'{{"node_{node.name}": 1}}']  # fmt: skip
            self._run(node, cmd, timeout_s)
        self.wait_for_nodes(len(self.nodes), timeout_s)

    def _run(self, node: Node, cmd: list[str], timeout_s: float) -> None:
        out = subprocess.run(node.command(*cmd), env=self.node_env(node), capture_output=True,
                             text=True, timeout=timeout_s)  # fmt: skip
        if out.returncode != 0:
            raise RuntimeError(f"{node.name}: {' '.join(cmd[:3])} failed: {out.stderr[-2000:]}")

    def alive_nodes(self) -> int:
        """Nodes the head counts active (``ray status`` from inside the head's namespace: the GCS, no dashboard)."""
        cmd = [str(BIN / "ray"), "status", "--address", self.address]
        out = subprocess.run(self.head.command(*cmd), env=self.env(RAY_TMPDIR=str(self.head.tmp)),
                             capture_output=True, text=True, timeout=60)  # fmt: skip
        if out.returncode != 0 or "Active:" not in out.stdout:
            return 0
        active = out.stdout.split("Active:", 1)[1].split("Pending:", 1)[0]
        return sum(1 for line in active.splitlines() if "node_" in line)

    def wait_for_nodes(self, n: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while (alive := self.alive_nodes()) < n:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {alive} of {n} Ray nodes alive after {timeout_s:.0f} s")
            time.sleep(1.0)

    def popen(self, *cmd: str, **kwargs) -> subprocess.Popen:
        """``cmd`` as a process inside the head's namespace (the driver's place), environment of the cluster."""
        return subprocess.Popen(self.head.command(*cmd), env=self.node_env(self.head), **kwargs)

    def mdf(self, *args: str, timeout_s: float = 600) -> subprocess.CompletedProcess:
        """``mdf ARGS`` run by a driver on the head node."""
        proc = self.popen(str(BIN / "mdf"), *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=timeout_s)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def kill_node(self, name: str) -> int:
        """SIGKILL every process of node ``name`` at once (a machine lost); returns how many there were."""
        pids = self.node(name).pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return len(pids)

    def cut_link(self, name: str) -> None:
        """The node's network link goes down: its processes live on, unreachable."""
        _ip("link", "set", "eth0", "down", ns=self.node(name).ns)

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)

    def s3_tool(self, *args: str) -> None:
        """``python -m tests.s3_tool ARGS`` on the head (the test process cannot reach its S3 server)."""
        from tests.s3_tool import run_tool

        run_tool(tuple(self.head.command()), self.env(), *args)

    def close(self) -> None:
        """Kill the processes inside this cluster's namespaces (only those), delete the namespaces and files."""
        if self.seaweed is not None:
            self.seaweed.stop()
        remove_hosts(self.nodes, self.switch)
        self.nodes = []
        shutil.rmtree(self.root, ignore_errors=True)
        atexit.unregister(self.close)


@contextlib.contextmanager
def started(**kwargs: Any) -> Iterator[NetnsCluster]:
    """A started :class:`NetnsCluster` (``kwargs`` as its fields), closed on the way out, also after a failure."""
    net = NetnsCluster(**kwargs)
    try:
        yield net.start()
    finally:
        net.close()
