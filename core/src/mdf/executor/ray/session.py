"""Starting or joining Ray for a run, and what the run learns about the cluster it ran on.

:func:`connect` joins ``executor.address`` / ``RAY_ADDRESS`` or starts a quiet local Ray bound to 127.0.0.1 and
returns a :class:`RaySession` (closed at the end of the run). :func:`cluster_info` records the cluster's totals
for the report, while the run is still connected.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from mdf.errors import MdfError
from mdf.executor.ray.params import RayParams
from mdf.run_stats import ClusterInfo
from mdf.runlog import FORMAT, adopt
from mdf.terminate import reclaim


class ClusterUnreachable(MdfError):
    """The Ray cluster named by ``executor.address`` / ``RAY_ADDRESS`` cannot be joined."""

    exit_code = 2


@dataclass
class RaySession:
    started_here: bool
    address: str = ""
    log_dir: str = ""

    def close(self) -> None:
        import ray

        if self.started_here and ray.is_initialized():
            if self.address == "local":
                stop_local_ray()
            else:
                ray.shutdown()


def stop_local_ray() -> None:
    """``ray.shutdown()`` of a Ray this process started, without the second it waits on the autoscaler.

    Ray stops a local Ray's processes one at a time: SIGTERM, up to a second to exit, then SIGKILL. The
    autoscaler's monitor never exits in that second (measured on Ray 2.60: 1.0 s of a 1.33 s shutdown, on every
    run), and a local Ray of fixed size has nothing for it to scale or to save. So it is killed first; Ray then
    finds it gone and stops the rest as before (0.1-0.3 s). Ray keeps its processes in a private table: where it
    is not there (another Ray version), the plain shutdown runs."""
    import ray

    try:
        monitors = ray._private.worker._global_node.all_processes.get("monitor", [])
    except AttributeError:
        monitors = []
    for info in monitors:
        process = getattr(info, "process", None)
        if process is not None and process.poll() is None:
            process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):  # else Ray's shutdown below waits on it again
                process.wait(timeout=5)  # reaped, so Ray's own stop finds it gone
    ray.shutdown()


LOOPBACK = ("127.0.0.1", "localhost", "::1")
LOCAL_GCS_TIMEOUT_S = 3
LOCAL_GCS_CONNECT_TIMEOUT_S = 2


def cluster_address(spec: RayParams) -> str | None:
    """The address to join: ``executor.address``, else ``RAY_ADDRESS``; ``None`` = start a local Ray."""
    address = spec.address or os.environ.get("RAY_ADDRESS")
    return None if address in (None, "", "local") else address


def _host(address: str) -> str:
    """Host of ``HOST:PORT`` (``ray://`` and ``[v6]`` forms too); for ``auto``, the host Ray recorded for the
    cluster last started on this machine (``ray start`` writes it in Ray's temp dir)."""
    if address == "auto":
        address = _recorded_cluster() or ""
    address = address.split("://", 1)[-1]
    return address.rsplit(":", 1)[0].strip("[]")


def _ray_temp_dir() -> str:
    """Ray's default temp dir, found as Ray finds it (``RAY_TMPDIR``, else ``TMPDIR``, else /tmp) + ``ray``."""
    base = os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(base, "ray")


def _recorded_cluster() -> str | None:
    """What ``auto`` means to Ray: the cluster last started on this machine, recorded in Ray's temp dir."""
    try:
        with open(os.path.join(_ray_temp_dir(), "ray_current_cluster")) as f:
            return f.read().strip() or None
    except OSError:
        return None


# A raylet connects to its own object store, and a worker to its raylet, retrying every
# ``raylet_client_connect_timeout_milliseconds`` (1,000 by default) up to ``..._num_connect_attempts`` times (10).
# The raylet's first try races the store's thread: in 5 of 17 local starts here it lost and waited the full
# second (``raylet.out``: 1.00 s between "Starting object store" and "ObjectManager server started"; ``ray.init``
# 3.2 s instead of 2.2 s). Retrying every 100 ms, 100 times, keeps Ray's 10 s budget and waits 0.1 s at most
# (0 of 18 starts over 2.3 s).
FAST_CONNECT = {
    "RAY_raylet_client_connect_timeout_milliseconds": "100",
    "RAY_raylet_client_num_connect_attempts": "100",
}


def fast_connect() -> None:
    """:data:`FAST_CONNECT` for the Ray this process starts next, unless the user set them (Ray reads them when
    it is imported and its processes inherit them)."""
    for key, value in FAST_CONNECT.items():
        os.environ.setdefault(key, value)


def _ray_environment(address: str | None, spec: RayParams) -> None:
    """Ray's own settings, as environment variables Ray reads when it is imported and that its processes inherit.

    * A cluster on loopback (``ray start --head --node-ip-address 127.0.0.1``, or the local Ray started here)
      is reached on loopback: without ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` Ray rewrites ``127.0.0.1:P`` to
      the machine's network address, where such a cluster does not listen.
    * ``RAY_enable_pipe_based_agent_to_parent_health_check``: Ray's per-node agents notice at once that their
      raylet died (a driver killed with SIGKILL takes its local Ray with it), instead of lingering for minutes.
    * ``FAST_CONNECT``: Ray's processes retry their local connections every 0.1 s instead of every second (above).
    * A local Ray's processes wait 2 s, not Ray's 5, for each try to reach their GCS on this host. A worker
      that was starting when the driver died (SIGKILL: the local GCS dies with it) tries four times, sleeping a
      second between: it outlived the driver by 24 s with Ray's default and by 11 s with 2 s
      (``test_no_ray_process_outlives_a_killed_driver_by_more_than_seconds``). A GCS that is up answers at once.
    * Ray's processes give up on a GCS that is gone after a few seconds (Ray's GCS reconnect timeout): for a
      local Ray, whose GCS dies with the driver, that is what ends the agents that outlive a killed driver
      (they report the raylet's death to the GCS first, retrying for a minute by default); when joining, it
      bounds the wait for a cluster that is not there (``connect_timeout_s``).
    """
    if "ray" in sys.modules:
        return  # already imported (a test, a notebook): Ray has read its settings
    if address is None or _host(address) in LOOPBACK:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_enable_pipe_based_agent_to_parent_health_check", "1")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    fast_connect()
    timeout = LOCAL_GCS_TIMEOUT_S if address is None else max(1, int(spec.connect_timeout_s))
    os.environ.setdefault("RAY_gcs_rpc_server_reconnect_timeout_s", str(timeout))
    if address is None:
        os.environ.setdefault("RAY_gcs_rpc_server_connect_timeout_s", str(LOCAL_GCS_CONNECT_TIMEOUT_S))


def connect(spec: RayParams) -> RaySession:
    """Join ``address`` / ``RAY_ADDRESS`` when given, else start a quiet local Ray bound to 127.0.0.1.

    Ray's own messages stay off the terminal: worker output in Ray's session logs (``log_to_driver`` off), the
    driver's Python logging (start-up and token warnings) in the run's log file when a run log is open
    (:func:`mdf.runlog.adopt`), else at ERROR only. The session lives in Ray's temp dir, never in the output.
    """
    address = cluster_address(spec)
    _ray_environment(address, spec)
    import ray

    if ray.is_initialized():
        return RaySession(started_here=False)
    logged = adopt("ray")  # after `import ray`: importing it configures the "ray" logger afresh
    common: dict[str, Any] = {"log_to_driver": False, "configure_logging": True}  # False would drop our handler
    if logged:  # Ray's start-up and token warnings go to the run log
        common.update(logging_level=logging.INFO, logging_format=FORMAT)
    else:
        common["logging_level"] = logging.ERROR
    if address:
        _reachable(address, spec.connect_timeout_s)
        _token_auth_as_ray_start()
        try:
            ray.init(address=address, runtime_env=worker_runtime_env(), **common)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ClusterUnreachable(join_error(address, exc)) from None
        reclaim()  # ray.init replaced mdf's SIGTERM handler with its own sys.exit(15)
        return RaySession(True, address, _session_logs())
    # Ray prestarts a worker per CPU at init for tasks; an mdf run uses actors only, which get their own
    # processes anyway, so prestarting costs ~1 s of a 2-core machine's start-up and buys nothing (measured:
    # ray.init 3.35 s -> 2.37 s, first actor call +0.1 s).
    ray.init(
        address="local",
        include_dashboard=spec.dashboard,
        _system_config={"enable_worker_prestart": False},
        **common,
    )
    reclaim()
    return RaySession(True, "local", _session_logs())


# Settings the ``mdf`` command gives its own process before numpy and pyarrow load (see :mod:`mdf.cli`): one
# OpenBLAS thread, mimalloc arenas committed on demand.
WORKER_ENV = ("OPENBLAS_NUM_THREADS", "MIMALLOC_ARENA_EAGER_COMMIT", "MIMALLOC_PURGE_DECOMMITS")


def worker_runtime_env() -> dict[str, Any] | None:
    """The driver's :data:`WORKER_ENV` settings for every worker of a cluster it joins.

    A local Ray's workers inherit them from the driver that started it; a cluster's workers have the environment
    of the shell that ran ``ray start``. Without them, W1 1 M joined to a ``ray start --head`` on this machine took
    9.41-11.15 s (three runs, median 9.47 s) against 8.88-9.61 s (median 8.89 s) with them: mimalloc's eagerly
    committed arenas fault in huge pages (see :mod:`mdf.cli`). Ray applies a job's ``runtime_env`` variables to
    each worker before it starts, so they are there when pyarrow loads its allocator."""
    env = {k: os.environ[k] for k in WORKER_ENV if k in os.environ}
    return {"env_vars": env} if env else None


def _token_auth_as_ray_start() -> None:
    """Send the token when the cluster wants it, by the rule ``ray start`` uses: with ``RAY_AUTH_MODE`` unset,
    token authentication is on when a token exists (``~/.ray/auth_token``, ``RAY_AUTH_TOKEN``, ...).

    ``ray start --head`` follows that rule, ``ray.init(address=...)`` does not: once any head had made the token
    file, joining by the address ``ray start`` printed (or ``RAY_ADDRESS``) failed with ``InvalidAuthToken``
    after 20 s of Ray's retries, while ``auto`` worked. An explicit ``RAY_AUTH_MODE`` is left as it is."""
    if "RAY_AUTH_MODE" in os.environ:
        return
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token authentication: nothing to send
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def join_error(address: str, exc: BaseException) -> str:
    """The one line a failed ``ray.init(address=...)`` becomes. Ray's version check spreads the two versions (and
    the node of this process) over six lines; they are the point of that error, so they are kept, joined."""
    text = str(exc).strip()
    if text.startswith("Version mismatch"):
        versions = " ".join(text.split())
        return (
            f"cannot join the Ray cluster at {address!r}: {versions}; run mdf with the cluster's Ray and Python "
            "versions (pip install ray==<its version> in a Python of its version)"
        )
    first = text.splitlines()[0] if text else type(exc).__name__
    return (
        f"cannot join the Ray cluster at {address!r}: {first}; start it (`ray start --head --port PORT`) "
        "or fix executor.address / RAY_ADDRESS"
    )


def _reachable(address: str, timeout_s: float) -> None:
    """Fail in one line before Ray does: Ray's core ends the process (C++ log lines, exit 1) when the GCS it
    was pointed at does not answer, so the port is tried first with a plain TCP connection."""
    target = _recorded_cluster() if address == "auto" else address
    if target is None:
        raise ClusterUnreachable(
            "executor.address is 'auto' but no Ray cluster was started on this machine (`ray start --head`)"
        )
    if "://" in target:
        return  # ray:// (Ray Client) and other schemes: Ray's own connection
    host, _, port = target.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except (OSError, ValueError) as exc:
        shown = address if target == address else f"{address} ({target})"
        raise ClusterUnreachable(
            f"cannot reach the Ray cluster at {shown!r}: {exc}; start it (`ray start --head --port "
            "PORT`) or fix executor.address / RAY_ADDRESS"
        ) from None


def _session_logs() -> str:
    """Where this Ray session keeps its logs (printed at the end of a run)."""
    import ray

    node = getattr(ray._private.worker, "_global_node", None)  # no public API tells the session directory
    return os.path.join(node.get_session_dir_path(), "logs") if node is not None else ""


def cluster_info() -> ClusterInfo:
    """The connected cluster's live nodes, CPUs and GPUs (the report's "Ray cluster" line)."""
    import ray

    res = ray.cluster_resources()
    nodes = len([n for n in ray.nodes() if n.get("Alive")])
    return ClusterInfo(nodes=nodes, cpus=res.get("CPU", 0), gpus=res.get("GPU", 0))
