"""What the report needs about a run besides its counters: the recipe as run, the machine, the batch-size
choice. Collected once at the end of a run into ``metrics.json`` so ``mdf report`` can rebuild the page from
the metadata alone, on another machine, after the recipe file changed."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

from mdf import __version__
from mdf.cpus import usable_cores
from mdf.recipe import Recipe
from mdf.run_stats import ClusterInfo, Machine, RunContext
from mdf.storage.redact import redact_tree
from mdf.storage.urls import is_remote


def machine(cluster: ClusterInfo | None = None) -> Machine:
    """This machine (the driver's), and the cluster the executor says the run ran on (Ray's totals)."""
    info = Machine(
        host=platform.node(),
        os=f"{platform.system()} {platform.release()}",
        python=sys.version.split()[0],
        cpus=usable_cores(),
        mdf=__version__,
    )
    try:
        with open("/proc/meminfo") as fh:
            info.memory_gb = round(int(fh.readline().split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    info.cluster = cluster
    return info


def run_context(
    recipe: Recipe, batch_plan: dict[str, Any] | None, batch_rows: int, cluster: ClusterInfo | None = None
) -> RunContext:
    """The recipe (after ``--set`` overrides), where rejected rows went, the machine (and the cluster the
    executor ran on), the batch-size choice."""
    rejected = recipe.rejected
    return RunContext(
        recipe=redact_tree(recipe.model_dump(mode="json")),  # input URLs without their credentials
        rejected_path=_where(str(rejected.params["path"])) if rejected and "path" in rejected.params else None,
        rejected_format=rejected.type if rejected else None,
        machine=machine(cluster),
        batch_rows=batch_rows,
        batch_plan=batch_plan,
    )


def _where(path: str) -> str:
    """An ``s3://`` (or other URL) rejected output as written; a local one made absolute."""
    return path if is_remote(path) else os.path.abspath(path)
