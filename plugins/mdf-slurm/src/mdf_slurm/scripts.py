"""The batch scripts ``mdf slurm run`` submits, as text (``--dry-run`` prints them; the run folder keeps them).

Plain bash with ``#SBATCH`` lines, so a user can read what runs, submit it by hand or keep it in their own
repository. Paths are absolute (a job's working directory is the submission's, ``--chdir``), and the job runs
the ``mdf`` and Python of the environment it was submitted from, as on a cluster with a shared software folder.

* **allocation** (:func:`allocation`): one job on ``--nodes`` nodes. Ray's head starts on the first node (where
  the script runs), a worker on every other node, one ``srun`` step each; the script polls until every node
  has joined (``python -m mdf_slurm.node wait``, no fixed sleep), runs the recipe on the Ray executor joined by
  the head's address, then stops the Ray steps with SIGTERM. Ray's token authentication is on, with a token of
  the job's own in its environment. A job Slurm requeued (a node failed, ``JobRequeue``) runs ``--resume``, so
  its second start continues the output the first began instead of being refused for it.
* **array** (:func:`array_task`): one task per slice of shards; task ``i`` reads line ``OFFSET + i + 1`` of
  the slices file (shard numbers) and runs ``mdf run --shards`` on them, inline, into the shared output.
  ``OFFSET`` comes from the submission, so one script serves every piece of an array split at
  ``MaxArraySize``.
* **finalize** (:func:`finalize`): after every array task has ended (``afterany``), ``mdf run --finalize``
  checks that every shard has a completion record and publishes ``_SUCCESS``, metrics and the report.
"""

from __future__ import annotations

import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from mdf import __version__

RAY_PORT = 6379


@dataclass
class Job:
    """What every script of a run has in common: where it runs and what it runs."""

    name: str
    run_dir: Path
    cwd: Path
    recipe: Path
    overrides: list[str] = field(default_factory=list)
    partition: str | None = None
    time: str | None = None
    account: str | None = None
    sbatch_args: list[str] = field(default_factory=list)
    python: str = sys.executable
    mdf: str = str(Path(sys.executable).with_name("mdf"))

    def header(self, log: str, *lines: str) -> list[str]:
        opts = [f"--job-name={self.name}", f"--chdir={self.cwd}", f"--output={self.run_dir / log}"]
        opts += [f"--partition={self.partition}"] if self.partition else []
        opts += [f"--time={self.time}"] if self.time else []
        opts += [f"--account={self.account}"] if self.account else []
        opts += [*lines, *self.sbatch_args]
        return ["#!/bin/bash", *(f"#SBATCH {shlex.quote(o)}" for o in opts)]

    def mdf_run(self, *extra: str) -> str:
        """``mdf run RECIPE --set ...`` as a shell line (overrides quoted)."""
        sets = " ".join(f"--set {shlex.quote(o)}" for o in self.overrides)
        return " ".join(x for x in (shlex.quote(self.mdf), "run", shlex.quote(str(self.recipe)), sets, *extra) if x)


def _stamp(what: str) -> str:
    return f"# {what}: written by mdf-slurm (mdf {__version__}) on {time.strftime('%Y-%m-%d %H:%M:%S')}"


def allocation(job: Job, nodes: int, port: int = RAY_PORT, ray_start_args: str = "", ready_timeout_s: int = 300) -> str:
    """The allocation-mode job: Ray across ``nodes`` nodes, the recipe on it, Ray stopped."""
    py = shlex.quote(job.python)
    extra = f" --ray-start-args {shlex.quote(ray_start_args)}" if ray_start_args else ""
    run = job.mdf_run("--set executor.type=ray", '--set "executor.address=$address"', "${resume:+--resume}")
    lines = [
        *job.header("slurm-%j.out", f"--nodes={nodes}", "--ntasks-per-node=1", "--exclusive"),
        _stamp("mdf slurm run --nodes"),
        "# Ray's head on this node (the first of the allocation), a worker on each other node: one srun step each,",
        "# `ray start --block`, so Slurm tracks every Ray process and ends them with the job.",
        "set -uo pipefail",
        'export MDF_SLURM_STARTED="$(date +%s.%N)"',
        'echo "mdf-slurm: job $SLURM_JOB_ID started on $SLURM_JOB_NODELIST"',
        "export RAY_USAGE_STATS_ENABLED=0 RAY_AUTH_MODE=token",
        'RAY_AUTH_TOKEN="$(od -An -N32 -tx1 /dev/urandom | tr -d " \\n")"  # this job\'s own Ray token',
        "export RAY_AUTH_TOKEN",
        f'address="$({py} -m mdf_slurm.node ip):{port}"',
        f'srun --nodes=1 --ntasks=1 --nodelist="$SLURMD_NODENAME" --overlap {py} -m mdf_slurm.node head '
        f"--port {port}{extra} &",
        "steps=($!)",
        'if [ "$SLURM_JOB_NUM_NODES" -gt 1 ]; then',
        "  others=$((SLURM_JOB_NUM_NODES - 1))",
        '  srun --nodes="$others" --ntasks="$others" --ntasks-per-node=1 --exclude="$SLURMD_NODENAME" --overlap \\',
        f'    {py} -m mdf_slurm.node worker --address "$address"{extra} &',
        "  steps+=($!)",
        "fi",
        "stop_ray() {  # SIGTERM to the Ray steps: each node shuts down; Slurm logs the steps as CANCELLED",
        "  local rc=$?",
        '  echo "mdf-slurm: stopping Ray"; kill -TERM "${steps[@]}" 2>/dev/null; wait "${steps[@]}" 2>/dev/null',
        "  # a run that succeeded leaves no Ray folder on any node; a failed one keeps them for their logs",
        '  [ "$rc" -eq 0 ] && srun --nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_JOB_NUM_NODES" '
        f"--ntasks-per-node=1 --overlap {py} -m mdf_slurm.node clean",
        "}",
        "trap stop_ray EXIT",
        f'{py} -m mdf_slurm.node wait --address "$address" --nodes "$SLURM_JOB_NUM_NODES" '
        f'--timeout {ready_timeout_s} $(printf -- "--step-pid %s " "${{steps[@]}}") || exit 1',
        "# requeued by Slurm (a node failed: JobRequeue): continue the output the first attempt began",
        'resume=""; [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ] && resume=1',
        run,
    ]
    return "\n".join(lines) + "\n"


def array_task(job: Job, slices: Path, cpus: int | None = None) -> str:
    """One array task: the shards on its line of ``slices``, inline, into the shared output."""
    res = [f"--cpus-per-task={cpus}"] if cpus else []
    lines = [
        *job.header("logs/task-%A_%a.out", "--ntasks=1", *res),
        _stamp("mdf slurm run --array"),
        "# one slice of the recipe's shards (a line of the slices file: shard numbers in the input's listing),",
        "# inline, into the shared output, with a completion record per shard; MDF_SLURM_OFFSET: this array's",
        "# first line, for an array split at the cluster's MaxArraySize",
        "set -euo pipefail",
        "line=$(( ${MDF_SLURM_OFFSET:-0} + SLURM_ARRAY_TASK_ID + 1 ))",
        f'shards="$(sed -n "${{line}}p" {shlex.quote(str(slices))})"',
        'echo "mdf-slurm: task $SLURM_ARRAY_TASK_ID (slice $line) on $(hostname): shards $shards"',
        "exec " + job.mdf_run("-q", '--shards "$shards"'),
    ]
    return "\n".join(lines) + "\n"


def finalize(job: Job) -> str:
    """The job after the array: every shard's completion record checked, the output published."""
    lines = [
        *job.header("logs/finalize-%j.out", "--ntasks=1"),
        _stamp("mdf slurm run --array (finalize)"),
        "# every shard must have a completion record; then _SUCCESS, metrics.json and the report are published",
        "set -euo pipefail",
        "exec " + job.mdf_run("--finalize"),
    ]
    return "\n".join(lines) + "\n"
