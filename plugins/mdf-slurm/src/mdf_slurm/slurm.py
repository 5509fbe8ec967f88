"""What mdf-slurm asks of Slurm, through its own commands (``sbatch``, ``scontrol``, ``squeue``, ``sacct``).

The commands, not a library: they are on every login node, they read the site's ``slurm.conf`` (or
``SLURM_CONF``) and munge credentials exactly as a user's shell does, and their behaviour is the documented
one. Every failure a user can meet before a job exists becomes one line (:class:`SlurmError`, exit 2): a
missing command, a controller that does not answer, a partition the cluster lacks, a submission Slurm refuses.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from mdf import MdfError

INSTALL = "run it on a Slurm login node, or install Slurm's commands (Debian/Ubuntu: apt-get install slurm-client)"
DEFAULT_MAX_ARRAY_SIZE = 1001  # Slurm's own default (slurm.conf(5))


class SlurmError(MdfError):
    """Slurm cannot take the work (no ``sbatch``, no controller, a bad partition, a refused submission):
    nothing was submitted."""

    exit_code = 2


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # sbatch says the cause on its last line ("Batch job submission failed: ..."), scontrol on its only one
    return lines[-1] if lines else ""


def unreachable(stderr: str) -> bool:
    return "Unable to contact slurm controller" in stderr or "Communication connection failure" in stderr


@dataclass
class Slurm:
    """The Slurm client commands on this machine; ``timeout_s`` bounds each call (a controller that does not
    answer takes ``MessageTimeout`` to say so)."""

    timeout_s: float = 120.0

    def command(self, name: str) -> str:
        found = shutil.which(name)
        if found is None:
            raise SlurmError(f"`{name}` is not on PATH, so this machine cannot submit to Slurm; {INSTALL}")
        return found

    def call(self, name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``name ARGS``; with ``check``, a non-zero exit is a :class:`SlurmError` with Slurm's own words."""
        cmd = [self.command(name), *args]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            raise SlurmError(
                f"`{name} {' '.join(args[:3])}` got no answer in {self.timeout_s:.0f} s: is the Slurm controller "
                "up? (`scontrol ping`)"
            ) from None
        if check and out.returncode != 0:
            said = _first_line(out.stderr) or _first_line(out.stdout) or f"exit {out.returncode}"
            if unreachable(out.stderr):
                raise SlurmError(
                    f"the Slurm controller does not answer ({said}); check that slurmctld runs and that this "
                    "machine's slurm.conf (or SLURM_CONF) names it: `scontrol ping`"
                )
            raise SlurmError(f"`{name} {' '.join(args)}` failed: {said}")
        return out

    def config(self) -> dict[str, str]:
        """``scontrol show config`` as ``{key: value}`` (also: the controller answers)."""
        out = self.call("scontrol", "show", "config").stdout
        found = (re.match(r"(\S+)\s+=\s?(.*)$", line) for line in out.splitlines())
        return {m.group(1): m.group(2).strip() for m in found if m}

    def max_array_size(self, config: dict[str, str] | None = None) -> int:
        """The cluster's ``MaxArraySize``: task ids of one array run from 0 to this minus one."""
        value = (config if config is not None else self.config()).get("MaxArraySize", "")
        return int(value) if value.isdigit() else DEFAULT_MAX_ARRAY_SIZE

    def partitions(self) -> dict[str, bool]:
        """``{partition: is_default}`` of the partitions this user may see."""
        out = self.call("sinfo", "-h", "-o", "%P").stdout
        names = [line.strip() for line in out.splitlines() if line.strip()]
        return {name.rstrip("*"): name.endswith("*") for name in names}

    def check_partition(self, partition: str | None) -> None:
        """A partition the cluster lacks is refused before anything is written, with the ones it has."""
        known = self.partitions()
        if partition is not None and partition not in known:
            listed = ", ".join(f"{p}{' (default)' if d else ''}" for p, d in known.items()) or "none visible"
            raise SlurmError(f"--partition {partition!r} is not a partition of this cluster ({listed}); pick one")

    def submit(self, script: str, *args: str) -> str:
        """``sbatch --parsable ARGS SCRIPT``; the job id."""
        out = self.call("sbatch", "--parsable", *args, script).stdout.strip()
        return out.split(";")[0]  # "<id>;<cluster>" on a federation

    def queued(self, jobs: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``{job or array task id: (state, reason)}`` of ``jobs`` still in the queue (array tasks one by one)."""
        if not jobs:
            return {}
        out = self.call("squeue", "-h", "-r", "-j", ",".join(jobs), "-o", "%i|%T|%r", check=False)
        rows = (line.split("|") for line in out.stdout.splitlines())
        return {r[0]: (r[1], r[2]) for r in rows if len(r) == 3}

    def finished(self, jobs: Sequence[str]) -> dict[str, tuple[str, str]] | None:
        """``{job or array task id: (state, exit code)}`` from ``sacct``; None where accounting is off."""
        if not jobs:
            return {}
        out = self.call("sacct", "-n", "-P", "-X", "-j", ",".join(jobs), "-o", "JobID,State,ExitCode", check=False)
        if out.returncode != 0:
            return None
        rows = (line.split("|") for line in out.stdout.splitlines())
        return {r[0]: (r[1].split()[0], r[2]) for r in rows if len(r) == 3 and r[1]}

    def job(self, job: str) -> dict[str, str]:
        """``scontrol show job``'s fields of one job (an array: its first task); {} once Slurm forgot it
        (``MinJobAge`` after it ended)."""
        out = self.call("scontrol", "show", "job", "-o", job, check=False).stdout
        first = out.splitlines()[0] if out.strip() else ""
        return dict(re.findall(r"(\w+)=(\S*)", first))
