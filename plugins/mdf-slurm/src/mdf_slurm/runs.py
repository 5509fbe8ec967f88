"""A Slurm run's folder: what was submitted, so ``mdf slurm status RUN`` can follow it without asking the user.

``mdf slurm run`` makes one folder per submission (default ``./mdf-slurm/<recipe>-<time>``, on the shared file
system a login node and the compute nodes both see) holding the scripts, ``run.json`` (mode, recipe, job ids,
the arrays and their offsets) and, in array mode, the slices: ``shards.json`` (the shard ids in the input's
listing order) and ``slices.txt`` (one line per array task: the shard numbers it runs). Slurm writes the jobs'
logs beside them (``slurm-<job>.out``; ``logs/task-<array job>_<task>.out``, ``logs/finalize-<job>.out``).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mdf import MdfError

FORMAT = 1
RECORD = "run.json"


@dataclass
class Array:
    """One ``sbatch --array`` of a run: its job id and the slices (lines of ``slices.txt``) it covers."""

    job: str
    offset: int  # first line (0-based) of slices.txt
    count: int


@dataclass
class Run:
    """What ``run.json`` records."""

    mode: str  # "allocation" or "array"
    recipe: str
    overrides: list[str]
    cwd: str
    output: str
    submitted: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    jobs: list[str] = field(default_factory=list)  # allocation: [job]; array: one id per array
    arrays: list[Array] = field(default_factory=list)
    finalize: str | None = None
    nodes: int | None = None
    resumed: bool = False
    format: int = FORMAT

    def save(self, folder: Path) -> None:
        tmp = folder / f"{RECORD}.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=1))
        os.replace(tmp, folder / RECORD)

    @classmethod
    def load(cls, folder: Path) -> Run:
        try:
            data = json.loads((folder / RECORD).read_text())
        except FileNotFoundError:
            raise MdfError(
                f"'{folder}' is not an mdf slurm run folder (no {RECORD}); give the folder `mdf slurm run` printed"
            ) from None
        except ValueError as exc:
            raise MdfError(f"'{folder / RECORD}' is damaged ({exc}); the jobs' logs are beside it") from None
        data["arrays"] = [Array(**a) for a in data.get("arrays", [])]
        return cls(**data)


def new_folder(base: Path | None, recipe: Path) -> Path:
    """A fresh run folder: ``base`` itself when given (must not hold a run yet), else a timestamped one under
    ``./mdf-slurm``."""
    if base is None:
        stem = re.sub(r"[^\w.-]+", "-", recipe.stem) or "recipe"
        base = Path("mdf-slurm") / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
        n = 1
        while base.exists():
            n += 1
            base = base.with_name(f"{base.name.rsplit('.', 1)[0]}.{n}")
    elif (base / RECORD).exists():
        raise MdfError(f"--run-dir '{base}' already holds a run; give a new folder, or leave --run-dir out")
    (base / "logs").mkdir(parents=True, exist_ok=True)
    return base.absolute()


def write_slices(folder: Path, shard_ids: list[str], slices: list[list[int]]) -> Path:
    """``shards.json`` (ids in listing order) and ``slices.txt`` (a line per task: comma-separated numbers)."""
    (folder / "shards.json").write_text(json.dumps(shard_ids))
    path = folder / "slices.txt"
    path.write_text("".join(",".join(map(str, s)) + "\n" for s in slices))
    return path


def read_slices(folder: Path) -> tuple[list[str], list[list[int]]]:
    ids = json.loads((folder / "shards.json").read_text())
    lines = (folder / "slices.txt").read_text().splitlines()
    return ids, [[int(x) for x in line.split(",") if x] for line in lines]


def split(shards: list[int], tasks: int) -> list[list[int]]:
    """``shards`` in ``tasks`` contiguous slices as even as counts allow (never an empty one)."""
    tasks = max(1, min(tasks, len(shards)))
    n = len(shards)
    return [shards[i * n // tasks : (i + 1) * n // tasks] for i in range(tasks)]


def arrays(count: int, max_array_size: int) -> list[tuple[int, int]]:
    """``(offset, count)`` of the ``sbatch --array`` pieces ``count`` tasks need where one array may hold task
    ids 0 to ``max_array_size - 1`` (Slurm's ``MaxArraySize``)."""
    size = max(1, max_array_size)
    return [(start, min(size, count - start)) for start in range(0, count, size)]


def describe(run: Run) -> dict[str, Any]:
    return asdict(run)
