"""Starting or joining Ray, and placing stage replicas between ``min`` and ``max``.

Replica counts are decided from the cluster's free resources before any actor is created: every stage first
gets its ``min``, then extra replicas are handed out one per stage in turn up to ``max`` while resources last.
Doing the arithmetic first (instead of creating ``max`` actors and seeing which start) gives a clear error that
names the stage and the missing resources, and no actor ever waits forever for resources that are not there.
Custom resources (``resources.custom``) pin a stage to the nodes that offer them.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import Any

from mdf.errors import MdfError
from mdf.executor.ray_params import RayParams
from mdf.recipe import ResourcesSpec, StageSpec


class PlacementError(MdfError):
    """A stage cannot get its minimum replicas on this cluster."""

    exit_code = 2


@dataclass
class RaySession:
    started_here: bool

    def close(self) -> None:
        import ray

        if self.started_here and ray.is_initialized():
            ray.shutdown()


def connect(spec: RayParams, log_dir: str) -> RaySession:
    """Join ``address`` / ``RAY_ADDRESS`` when given, else start a quiet local Ray bound to 127.0.0.1."""
    address = spec.address or os.environ.get("RAY_ADDRESS")
    if not address and "ray" not in sys.modules:
        # A local Ray is for this machine only: with this set (read when ray is imported) Ray binds its
        # services to 127.0.0.1 instead of the machine's network address.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray

    if ray.is_initialized():
        return RaySession(started_here=False)
    common: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": True, "configure_logging": True}
    if address:
        ray.init(address=address, **common)
        return RaySession(started_here=True)
    kwargs: dict[str, Any] = {"include_dashboard": spec.dashboard}
    temp = os.path.abspath(os.path.join(log_dir, "_ray"))
    if len(temp) < 60:  # Ray puts unix sockets under its temp dir; their paths must stay short
        kwargs["_temp_dir"] = temp
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Ray prestarts a worker per CPU at init for tasks; an mdf run uses actors only, which get their own
    # processes anyway, so prestarting costs ~1 s of a 2-core machine's start-up and buys nothing (measured:
    # ray.init 3.35 s -> 2.37 s, first actor call +0.1 s).
    kwargs["_system_config"] = {"enable_worker_prestart": False}
    ray.init(address="local", **common, **kwargs)
    return RaySession(started_here=True)


def _demand(res: ResourcesSpec) -> dict[str, float]:
    d = {"CPU": res.cpu, "GPU": res.gpu, **res.custom}
    if res.memory_mb:
        d["memory"] = res.memory_mb * 1024 * 1024
    return {k: v for k, v in d.items() if v > 0}


def fuse_groups(stages: list[StageSpec], fuse: bool = True) -> list[list[int]]:
    """Consecutive stages with the same resources and replicas, as groups that one actor runs together.

    A batch then goes loader -> group -> writer instead of through one actor per stage: one object-store hop
    and one remote call fewer per fused stage, the same replicas and resources the recipe asked for (Ray Data
    fuses compatible ``map_batches`` the same way). Stages that differ in either stay separate actors, so a
    slow stage with more replicas, or a GPU stage, keeps its own group."""
    groups: list[list[int]] = []
    for i, stage in enumerate(stages):
        prev = stages[groups[-1][-1]] if groups else None
        if fuse and prev is not None and (prev.resources, prev.replicas) == (stage.resources, stage.replicas):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def plan_replicas(stages: list[StageSpec], available: dict[str, float], indices: list[int] | None = None) -> list[int]:
    """Replicas per stage: all ``min``s first (or a PlacementError), then round-robin up to ``max``.
    ``indices`` are the stages' places in the recipe, for the error message (default: their order)."""
    free = dict(available)
    counts = []
    for i, stage in zip(indices or range(len(stages)), stages, strict=True):
        need = _demand(stage.resources)
        for _ in range(stage.replicas.min):
            short = {k: v for k, v in need.items() if free.get(k, 0.0) + 1e-9 < v}
            if short:
                have = {k: round(free.get(k, 0.0), 3) for k in short}
                raise PlacementError(
                    f"stages[{i}] '{stage.name}': cannot place {stage.replicas.min} replica(s) needing {need} each; "
                    f"missing {sorted(short)} (free now: {have}); lower replicas.min or resources, or add nodes"
                )
            _take(free, need)
        counts.append(stage.replicas.min)
    grew = True
    while grew:
        grew = False
        for i, stage in enumerate(stages):  # i: position in this list
            need = _demand(stage.resources)
            if counts[i] < stage.replicas.max and all(free.get(k, 0.0) + 1e-9 >= v for k, v in need.items()):
                _take(free, need)
                counts[i] += 1
                grew = True
    return counts


def _take(free: dict[str, float], need: dict[str, float]) -> None:
    for k, v in need.items():
        free[k] = free.get(k, 0.0) - v


def actor_options(res: ResourcesSpec, spec: RayParams, name: str) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "num_cpus": res.cpu,
        "num_gpus": res.gpu,
        "max_restarts": spec.max_restarts,
        "max_task_retries": spec.max_task_retries,
        "name": name,
    }
    if res.memory_mb:
        opts["memory"] = res.memory_mb * 1024 * 1024
    if res.custom:
        opts["resources"] = dict(res.custom)
    return opts
