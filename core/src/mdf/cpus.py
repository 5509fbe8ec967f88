"""How many cores this process may use, as the native kernels count them.

Why not ``os.cpu_count()``: it is the machine's count. Under ``taskset``, a Slurm or cpuset allocation, or a
container's CPU limit (Kubernetes ``limits.cpu``, ``docker --cpus``: a cgroup quota), the process gets fewer, and
one inline worker per machine core then oversubscribes what it has (64 workers on a pod limited to 2 cores). The
kernels' rayon pool already sizes itself with Rust's ``std::thread::available_parallelism``, which takes the
affinity mask and the cgroup quota; the executor, the planner and the bucket count take the same figure from
here, so the Python side and the kernels agree.

Like Rust's: the affinity mask's size, lowered to ``ceil(quota / period)`` of the tightest cgroup CPU limit on the
way from the process's cgroup up to the hierarchy's root (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us`` and
``cpu.cfs_period_us``); never below 1.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from pathlib import Path


@functools.cache
def usable_cores() -> int:
    """Cores this process may run on (affinity and cgroup CPU quota), at least 1; computed once per process."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    quota = cgroup_cpu_limit()
    return max(1, min(cores, quota) if quota is not None else cores)


def cgroup_cpu_limit(
    proc_cgroup: Path = Path("/proc/self/cgroup"), mountinfo: Path = Path("/proc/self/mountinfo")
) -> int | None:
    """``ceil(quota / period)`` of the tightest CPU quota over this process's cgroup and its parents, or ``None``
    when there is none (or it cannot be read: no cgroup file system, another OS). Where each hierarchy is
    mounted comes from ``mountinfo``: v2 alone at ``/sys/fs/cgroup``, hybrid hosts at ``.../unified`` beside the
    v1 controllers."""
    try:
        lines = proc_cgroup.read_text().splitlines()
        mounts = _cgroup_mounts(mountinfo.read_text())
    except OSError:
        return None
    limits: list[int] = []
    for line in lines:
        if line.count(":") < 2:
            continue
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # cgroup v2: "0::/path"
            found = [(m, r) for kind, m, r, _ in mounts if kind == "cgroup2"]
            limit_of = _v2_limit
        elif "cpu" in controllers.split(","):  # cgroup v1: "4:cpu,cpuacct:/path"
            found = [(m, r) for kind, m, r, opts in mounts if kind == "cgroup" and "cpu" in opts]
            limit_of = _v1_limit
        else:
            continue
        for mount, mount_root in found[:1]:
            limits += _walk(mount, _relative(path, mount_root), limit_of)
    return min(limits) if limits else None


def _cgroup_mounts(text: str) -> list[tuple[str, Path, str, set[str]]]:
    """(file system type, mount point, the hierarchy's folder mounted there, super options) of each cgroup mount
    in ``/proc/self/mountinfo`` (``id parent dev root mountpoint opts... - fstype source superopts``)."""
    out = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if sep and len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            out.append((tail[0], Path(fields[4]), fields[3], set(tail[2].split(","))))
    return out


def _relative(path: str, mount_root: str) -> str:
    """The cgroup path below the mounted folder: a container's mount shows only its own part of the tree."""
    if mount_root != "/" and (path == mount_root or path.startswith(mount_root.rstrip("/") + "/")):
        return path[len(mount_root) :]
    return path


def _walk(mount: Path, path: str, limit_of: Callable[[Path], int | None]) -> list[int]:
    """The limits set on ``mount/path`` and every folder above it inside the mount, the mount itself included (a
    container often sees its own cgroup as the root)."""
    out: list[int] = []
    parts = [p for p in path.strip("/").split("/") if p]
    for depth in range(len(parts), -1, -1):
        limit = limit_of(mount.joinpath(*parts[:depth]))
        if limit is not None:
            out.append(limit)
    return out


def _v2_limit(folder: Path) -> int | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        return None
    return None if quota == "max" else _ceil(quota, period)


def _v1_limit(folder: Path) -> int | None:
    try:
        quota = (folder / "cpu.cfs_quota_us").read_text().strip()
        period = (folder / "cpu.cfs_period_us").read_text().strip()
    except OSError:
        return None
    return None if quota.startswith("-") else _ceil(quota, period)


def _ceil(quota: str, period: str) -> int | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return max(1, math.ceil(q / p)) if q > 0 and p > 0 else None
