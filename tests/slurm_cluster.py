"""A real Slurm cluster on one machine: Debian's ``slurmctld``, ``slurmd`` and ``munge``, one host per node.

Why a real one: what breaks on Slurm is Slurm's own behaviour (``MaxArraySize``, a task cancelled or its node
lost, ``srun`` steps inside an allocation, a controller that does not answer), which no mock of ``sbatch``
shows. Every node is a network host of its own, as in :mod:`tests.netns_cluster` (whose bridge this reuses):

* ``ctl`` (``10.78.0.1``): ``munged`` and ``slurmctld``; it is the *login node* too, where the tests run
  ``sbatch``, ``squeue`` and ``mdf slurm ...`` (the test process's own namespace has no route to the cluster);
* ``n1``, ``n2``, ...: ``10.78.0.<1+i>``, a ``slurmd`` each, in a UTS namespace of its own as well, so
  ``hostname`` inside a job says ``n1``, as on a real compute node; pinned with ``taskset`` to core
  ``i mod cores`` and declared with one CPU (``cpus_per_node``), so on a two-core machine each node has a core
  of its own. Jobs are children of their node's ``slurmd``, so they run in its namespaces and on its core.

Munge: one ``munged`` for the cluster (the key is the cluster's shared secret; a real cluster runs one per host
with the same key) whose socket, a path on the file system every namespace shares, is named in ``slurm.conf``.
All daemons run as root (``SlurmUser=root``); the shared folder is the machine's file system, as NFS would be.

``slurm.conf`` is generated: ``select/cons_tres`` with ``CR_CPU``, ``proctrack/linuxproc`` and ``task/none`` (no
cgroup plugin: several ``slurmd`` on one kernel would share its cgroup tree), no accounting database
(``sacct`` answers that accounting is disabled, as on many small clusters), ``MaxArraySize`` from the
constructor (set low to test splitting), ``SlurmdTimeout`` short so a lost node is noticed in seconds, and
``ReturnToService=2`` so a restarted ``slurmd`` takes work again.

Each node's processes are also put in a cgroup-v1 ``cpuacct`` group of their own where the machine allows it
(:meth:`SlurmCluster.cpu_s`): the CPU time of everything a node ran, exited processes included, which is how
the benchmark charges a Slurm run for all it cost.

Unique per cluster: namespaces ``mdfs-<id>-*``, the folder ``/tmp/mdfs-<id>/``, the cgroups; ports and the
subnet need not be, since each cluster's namespaces see only each other. :meth:`SlurmCluster.close` kills
exactly the processes inside the cluster's namespaces, deletes them, the cgroups and the folder; it runs on a
failed test too and at interpreter exit.

Needs root, iproute2 and Debian's ``slurmctld slurmd slurm-client munge`` (the ``slurm`` nox session installs
them); :func:`unavailable` says what is missing, for a skip.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .netns_cluster import Node, add_hosts, remove_hosts
from .netns_cluster import unavailable as netns_unavailable

SUBNET = "10.78.0"
PROGRAMS = ("slurmctld", "slurmd", "sbatch", "munged")
CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def unavailable() -> str | None:
    """Why this machine cannot host the cluster (not root, no namespaces, Slurm or munge missing), else None."""
    missing = [p for p in PROGRAMS if shutil.which(p, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None]
    if missing:
        return f"needs {', '.join(missing)}: apt-get install slurmctld slurmd slurm-client munge"
    return netns_unavailable()


def _which(name: str) -> str:
    found = shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if found is None:
        raise RuntimeError(f"{name} not found: apt-get install slurmctld slurmd slurm-client munge")
    return found


def _inside(node: Node, *cmd: str) -> list[str]:
    """``cmd`` run in ``node``'s network namespace (and on its core). ``nsenter``, not ``ip netns exec``: that one
    mounts a sysfs of the namespace over ``/sys``, which hides ``/sys/fs/cgroup``, and slurmd 22.05 will not
    start without a cgroup file system to inspect (even with no cgroup plugin configured). By absolute path, so a
    test may give ``cmd`` a PATH without the system's folders."""
    pin = [shutil.which("taskset") or "taskset", "-c", str(node.core)] if node.core is not None else []
    return [shutil.which("nsenter") or "nsenter", f"--net=/run/netns/{node.ns}", "--", *pin, *cmd]


@dataclass
class SlurmCluster:
    """A controller (the login node too) and ``nodes`` compute nodes, each a host of its own (module doc)."""

    nodes: int = 2
    cpus_per_node: int = 1
    max_array_size: int = 1001
    partition: str = "debug"
    slurmd_timeout_s: int = 10
    id: str = field(default_factory=lambda: secrets.token_hex(3))
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="mdfs-", dir="/tmp")))
    hosts: list[Node] = field(default_factory=list)
    started_s: float = 0.0  # seconds from start() to every node idle
    _procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def switch(self) -> str:
        return f"mdfs-{self.id}-sw"

    @property
    def ctl(self) -> Node:
        return self.hosts[0]

    @property
    def compute(self) -> list[Node]:
        return self.hosts[1:]

    @property
    def conf(self) -> Path:
        return self.root / "etc" / "slurm.conf"

    @property
    def munge_socket(self) -> Path:
        return self.root / "munge" / "munge.socket"

    @property
    def shared(self) -> Path:
        """A folder every node sees (the machine's file system, as NFS would be): job scripts, logs, outputs."""
        return self.root / "shared"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of the cluster's commands: ``SLURM_CONF`` naming this cluster, this Python's scripts
        first on PATH (a job runs ``mdf`` from the environment it was submitted from, as users' jobs do)."""
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", ""), "/usr/sbin"])
        drop = ("RAY_ADDRESS", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_AUTH_TOKEN_PATH", "SLURM_JOB_ID")
        env = {k: v for k, v in os.environ.items() if k not in drop}
        return {**env, "SLURM_CONF": str(self.conf), "PATH": path, "COLUMNS": "200", **extra}

    def start(self, timeout_s: float = 120) -> SlurmCluster:
        atexit.register(self.close)
        began = time.monotonic()
        try:
            self.root.chmod(0o755)  # munged checks every folder above its socket
            self.shared.mkdir()
            cores = os.cpu_count() or 1
            names = ["ctl", *(f"n{i}" for i in range(1, self.nodes + 1))]
            add_hosts(self.hosts, self.switch, f"mdfs-{self.id}", names, SUBNET, self.root,
                      [None, *(i % cores for i in range(self.nodes))])  # fmt: skip
            self._cgroups()
            self._munge()
            self._write_conf()
            ctld = [_which("slurmctld"), "-D", "-i", "-f", str(self.conf)]
            self._spawn(self.ctl, ctld, "slurmctld")
            for node in self.compute:
                self.start_slurmd(node.name)
            self.wait_idle(timeout_s)
        except BaseException:
            self.close()
            raise
        self.started_s = time.monotonic() - began
        return self

    def _cgroups(self) -> None:
        if not os.access(CPUACCT, os.W_OK):
            return
        for node in self.hosts:
            with contextlib.suppress(OSError):
                (CPUACCT / node.ns).mkdir()

    def _munge(self) -> None:
        secret = self.root / "munge-key"
        secret.mkdir(mode=0o700)
        key = secret / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o400)
        self.munge_socket.parent.mkdir(mode=0o755)
        cmd = [_which("munged"), "-F", f"--socket={self.munge_socket}", f"--key-file={key}",
               f"--log-file={secret / 'munged.log'}", f"--pid-file={secret / 'munged.pid'}",
               f"--seed-file={secret / 'munged.seed'}", f"--origin={self.ctl.address}"]  # fmt: skip
        self._spawn(self.ctl, cmd, "munged")
        deadline = time.monotonic() + 30
        while not self.munge_socket.exists():
            if time.monotonic() > deadline or self._procs["munged"].poll() is not None:
                raise RuntimeError(f"munged did not start: {(self.root / 'ctl' / 'munged.out').read_text()[-2000:]}")
            time.sleep(0.05)

    def _write_conf(self) -> None:
        self.conf.parent.mkdir()
        (self.root / "ctl" / "state").mkdir()
        nodes = "\n".join(
            f"NodeName={n.name} NodeAddr={n.address} CPUs={self.cpus_per_node} RealMemory=2000 State=UNKNOWN"
            for n in self.compute
        )
        names = ",".join(n.name for n in self.compute)
        self.conf.write_text(f"""# generated by tests/slurm_cluster.py for cluster {self.id}
ClusterName=mdfs{self.id}
SlurmctldHost=ctl({self.ctl.address})
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={self.root}/ctl/state
SlurmdSpoolDir={self.root}/%n/spool
SlurmctldPidFile={self.root}/ctl/slurmctld.pid
SlurmdPidFile={self.root}/%n/slurmd.pid
SlurmctldLogFile={self.root}/ctl/slurmctld.log
SlurmdLogFile={self.root}/%n/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout={self.slurmd_timeout_s}
MessageTimeout=10
KillWait=5
MinJobAge=600
InactiveLimit=0
MaxArraySize={self.max_array_size}
{nodes}
PartitionName={self.partition} Nodes={names} Default=YES MaxTime=INFINITE State=UP
""")

    def _spawn(self, node: Node, cmd: list[str], name: str) -> subprocess.Popen:
        """``cmd`` as a daemon in ``node``'s namespaces (its own hostname), in the node's cpuacct group; output
        to ``<node>/<name>.out``."""
        group = CPUACCT / node.ns / "cgroup.procs"
        enter = f"echo $$ > {group}; " if group.exists() else ""
        script = f'{enter}hostname {node.name} && exec "$@"'
        unshare = ["unshare", "--uts", "--", "sh", "-c", script, name, *cmd]
        log = open(node.tmp / f"{name}.out", "ab")  # noqa: SIM115 - the daemon's stdout for its whole life
        proc = subprocess.Popen(_inside(node, *unshare), env=self.env(), stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self._procs[name if node is self.ctl else f"{name}-{node.name}"] = proc
        return proc

    def start_slurmd(self, name: str) -> None:
        """(Re)start node ``name``'s ``slurmd``."""
        (self.root / name / "spool").mkdir(exist_ok=True)
        self._spawn(self.node(name), [_which("slurmd"), "-D", "-f", str(self.conf)], "slurmd")

    def wait_idle(self, timeout_s: float) -> None:
        """Until every compute node is ``idle`` (registered, no job), or raise with the daemons' logs."""
        deadline = time.monotonic() + timeout_s
        while True:
            states = self.node_states()
            if states and all(s == "idle" for s in states.values()):
                return
            if time.monotonic() > deadline:
                logs = "\n".join(p.read_text(errors="replace")[-1500:] for p in self.root.glob("*/*.out"))
                raise RuntimeError(f"nodes not idle after {timeout_s:.0f} s: {states}\n{logs}")
            time.sleep(0.3)

    def node_states(self) -> dict[str, str]:
        """``{node: state}`` as ``sinfo`` reports it (``idle``, ``alloc``, ``down*``, ...); empty when the
        controller does not answer."""
        out = self.login("sinfo", "-h", "-N", "-o", "%N %t", timeout_s=30)
        return dict(line.split() for line in out.stdout.splitlines() if len(line.split()) == 2)

    def login(self, *cmd: str, timeout_s: float = 600, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> subprocess.CompletedProcess:  # fmt: skip
        """``cmd`` run on the login node (the controller's namespace), with the cluster's environment, in the
        cluster's shared folder unless ``cwd`` (so ``mdf slurm run``'s default ``./mdf-slurm`` run folders land
        there, never in the repository)."""
        return subprocess.run(_inside(self.ctl, *cmd), env=env or self.env(), capture_output=True, text=True,
                              timeout=timeout_s, cwd=cwd or self.shared)  # fmt: skip

    def mdf(self, *args: str, timeout_s: float = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """``mdf ARGS`` on the login node."""
        return self.login(str(Path(sys.executable).with_name("mdf")), *args, timeout_s=timeout_s, env=env)

    def submit(self, *args: str, cwd: Path | None = None) -> Path:
        """``mdf slurm run ARGS`` on the login node; the run folder it printed (asserts it submitted)."""
        out = self.login(str(Path(sys.executable).with_name("mdf")), "slurm", "run", *args, cwd=cwd)
        assert out.returncode == 0, out.stderr[-3000:]
        follow = [line for line in out.stdout.splitlines() if line.startswith("follow it: mdf slurm status ")]
        assert follow, out.stdout
        folder = Path(follow[-1].rsplit(" ", 1)[1])
        return folder if folder.is_absolute() else (cwd or self.shared) / folder

    def wait_run(self, folder: Path, timeout_s: float = 900) -> dict[str, Any]:
        """Until every job of the run in ``folder`` (arrays, finalize) has left the queue; its ``run.json``."""
        run = json.loads((folder / "run.json").read_text())
        for job in [*run["jobs"], *([run["finalize"]] if run.get("finalize") else [])]:
            self.wait_job(job, timeout_s)
        return dict(run)

    def wait_job(self, job: str, timeout_s: float = 600) -> None:
        """Until job ``job`` (all of an array's tasks) has left the queue."""
        deadline = time.monotonic() + timeout_s
        while self.login("squeue", "-h", "-j", job, "-o", "%i", timeout_s=30).stdout.strip():
            if time.monotonic() > deadline:
                raise RuntimeError(f"job {job} still queued after {timeout_s:.0f} s")
            time.sleep(0.5)

    def job_state(self, job: str) -> dict[str, str]:
        """``scontrol show job``'s fields of ``job`` (kept ``MinJobAge`` seconds after it ends)."""
        out = self.login("scontrol", "show", "job", "-o", job, timeout_s=30).stdout
        return dict(re.findall(r"(\w+)=(\S*)", out.splitlines()[0])) if out.strip() else {}

    def stop_controller(self) -> None:
        """Stop ``slurmctld`` (SIGTERM, as an administrator would): clients then find no controller."""
        proc = self._procs["slurmctld"]
        proc.terminate()
        proc.wait(timeout=60)

    def kill_node(self, name: str) -> int:
        """SIGKILL every process of node ``name`` at once (slurmd, its job steps, their children): a machine
        lost. Returns how many there were."""
        node = self.node(name)
        pids = node.pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._procs[f"slurmd-{name}"].wait(timeout=10)
        return len(pids)

    def cpu_s(self) -> dict[str, float] | None:
        """CPU seconds each host's processes used since the cluster started (exited ones included), from the
        hosts' cpuacct groups; None where the machine has no writable cgroup-v1 cpuacct."""
        try:
            return {n.name: int((CPUACCT / n.ns / "cpuacct.usage").read_text()) / 1e9 for n in self.hosts}
        except OSError:
            return None

    def node(self, name: str) -> Node:
        """The host named ``name`` (``ctl``, ``n1``, ``n2``)."""
        return next(n for n in self.hosts if n.name == name)

    def close(self) -> None:
        """Kill the processes inside this cluster's namespaces (only those), delete namespaces, cgroups, files."""
        remove_hosts(self.hosts, self.switch)
        for proc in self._procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        for node in self.hosts:
            with contextlib.suppress(OSError):
                (CPUACCT / node.ns).rmdir()
        self.hosts = []
        shutil.rmtree(self.root, ignore_errors=True)
        atexit.unregister(self.close)


@contextlib.contextmanager
def started(**kwargs: Any) -> Iterator[SlurmCluster]:
    """A started :class:`SlurmCluster` (``kwargs`` as its fields), closed on the way out, also after a failure."""
    cluster = SlurmCluster(**kwargs)
    try:
        yield cluster.start()
    finally:
        cluster.close()
