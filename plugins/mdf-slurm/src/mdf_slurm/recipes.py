"""What ``mdf slurm run`` checks about a recipe before it submits anything, through mdf's public face.

Every check that can fail because of the recipe runs on the login node, before ``sbatch``: a bad recipe is exit
2 in one line there, never a job that fails in the queue an hour later. Allocation mode checks the recipe as
the job will run it (``executor.type=ray``); array mode also lists the input (the shard ids the slices number)
and refuses recipes whose operators keep state across shards (:func:`mdf.slice_plan` says which).

Array mode runs on core's slice runs (:func:`mdf.slice_plan`, :func:`mdf.shard_records`, ``mdf run --shards``
and ``--finalize``): each task is an inline run of its shards into the shared output with a completion record
per shard, and the finalize job publishes the output once every shard has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mdf import RecipeError, load_recipe, shard_records, slice_plan

RAY = ["executor.type=ray"]
INLINE = ["executor.type=inline"]


def check_allocation(recipe: Path, overrides: list[str]) -> str:
    """The recipe as the allocation job runs it (on Ray, address given there); its output folder."""
    loaded = load_recipe(recipe, [*overrides, *RAY, "executor.address=127.0.0.1:6379"])
    return str(loaded.writer.params.get("path", "."))


@dataclass
class Slices:
    """The recipe's shards, for array mode: ids in the input's listing order, and those already done."""

    output: str
    shard_ids: list[str]
    done: set[str]

    @property
    def missing(self) -> list[int]:
        return [i for i, s in enumerate(self.shard_ids) if s not in self.done]


def check_array(recipe: Path, overrides: list[str], resume: bool) -> Slices:
    """List the shards and refuse what array mode cannot run (state across shards; an output of another run
    without ``--resume``), in one line naming why and what to do instead."""
    loaded = load_recipe(recipe, [*overrides, *INLINE])
    plan = slice_plan(loaded, resume=resume)
    if plan.stateful:
        raise RecipeError(
            f"{plan.stateful[0]} keeps state across shards, and array mode runs each slice of shards on its own "
            "with no state shared between tasks; run it across one allocation instead: mdf slurm run "
            f"{recipe} --nodes N"
        )
    done = set(shard_records(plan.output)) if resume else set()
    return Slices(plan.output, list(plan.shard_ids), done)
