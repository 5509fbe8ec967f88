"""Placing a pass's actors: stage replicas between ``min`` and ``max``, loaders, writers or whole-shard replicas.

Replica counts are decided from the cluster's free resources before any actor is created: every stage first
gets its ``min``, then extra replicas are handed out one per stage in turn up to ``max`` while resources last.
Doing the arithmetic first (instead of creating ``max`` actors and seeing which start) gives a clear error that
names the stage and the missing resources, and no actor ever waits forever for resources that are not there.
Custom resources (``resources.custom``) pin a stage to the nodes that offer them. :func:`start` places a pass's
actors and returns them as a :class:`Pipeline`, which :meth:`Pipeline.teardown` ends.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from mdf.errors import MdfError
from mdf.executor.ray.params import RayParams, auto_max_in_flight
from mdf.plan import Plan
from mdf.recipe import ResourcesSpec, StageSpec
from mdf.state import KeyState

NODE_CHECK_S = 5.0
"""How often, while nothing comes back, a driver looks for replicas stranded on a dead node."""


class PlacementError(MdfError):
    """A stage cannot get its minimum replicas on this cluster."""

    exit_code = 2


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


def replica_counts(stages: list[StageSpec], available: dict[str, float], indices: list[int] | None = None) -> list[int]:
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


@dataclass
class Pipeline:
    """One pass's actors and what placing them decided: the stage groups (consecutive stages one actor runs)
    and their replicas, the bound on chains in flight, the resources free before (so the teardown can wait for
    them to come back). In whole-shard mode ``stages[0]`` are :class:`~mdf.executor.ray.actors.ShardActor`
    replicas, also listed as the writers."""

    plan: Plan
    groups: list[list[int]]
    replicas: list[int]
    loaders: list[Any] = field(default_factory=list)
    stages: list[list[Any]] = field(default_factory=list)
    writers: list[Any] = field(default_factory=list)
    whole_shards: bool = False
    max_in_flight: int = 0
    free_before: dict[str, float] = field(default_factory=dict)
    startup_s: float = 0.0
    load: dict[Any, int] = field(default_factory=lambda: defaultdict(int))
    lost: list[Any] = field(default_factory=list)  # whole-shard replicas dropped after their node died
    nodes: dict[int, str] = field(default_factory=dict)  # id(stage replica) -> the node it started on

    def least_loaded(self, stage: int) -> Any:
        """The replica of ``stage`` with the fewest chains in flight (ties: the first)."""
        return min(self.stages[stage], key=lambda a: self.load[a])

    def replicas_by_stage(self) -> list[int]:
        """Replicas of each recipe stage (a fused group's stages share them)."""
        placed = {i: n for g, n in zip(self.groups, self.replicas, strict=True) for i in g}
        return [placed.get(i, 1) for i in range(len(self.plan.recipe.stages))]

    def lose(self, replica: Any) -> int:
        """Drop a whole-shard replica whose process or node died (kept for the teardown: it may restart);
        return how many are left."""
        self.stages[0].remove(replica)
        self.lost.append(replica)
        return len(self.stages[0])

    def stop_stranded(self) -> int:
        """Kill, for good, the stage replicas whose node is dead; return how many.

        Why: Ray restarts a replica whose node died (``max_restarts``) and retries its call on the restarted
        one, but the restart needs a node with room for it; on a cluster whose other replicas hold every CPU it
        waits forever, and so does its shard (seen with a worker host's link cut: the run hung). Killed, the call
        ends in an actor error: the shard runs again on a replica that is alive (whole shards), or the run stops
        in one line and ``--resume`` continues it (chains)."""
        import ray

        alive = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
        stranded = [a for g in self.stages for a in g if self.nodes.get(id(a), "") not in (*alive, "")]
        for actor in stranded:
            ray.kill(actor, no_restart=True)
        return len(stranded)

    def teardown(self, wait: bool = True) -> None:
        """Kill the pass's actors and wait (briefly) until their resources are free again, so a following run
        or pass on the same cluster sees them; Ray frees them asynchronously. ``wait=False`` when nothing will
        follow on this Ray (the last pass on a local Ray that is shut down next)."""
        import ray

        if not ray.is_initialized():
            return
        everyone = {id(a): a for a in [*self.loaders, *self.writers, *self.lost, *(a for g in self.stages for a in g)]}
        for actor in everyone.values():
            ray.kill(actor, no_restart=True)
        deadline = time.monotonic() + 10
        while wait and time.monotonic() < deadline:
            free = ray.available_resources()
            if all(free.get(k, 0.0) + 1e-6 >= v for k, v in self.free_before.items()):
                return
            time.sleep(0.05)


def start(plan: Plan, spec: RayParams, run_id: str, key_state: KeyState | None, placed: list[Pipeline]) -> Pipeline:
    """Place and start a pass's actors; the pipeline goes into ``placed`` before they are waited for, so a
    failure to start still tears them down. Chains of loaders -> stage groups -> writers, or whole-shard
    replicas when :func:`whole_shards` says so."""
    import ray

    from mdf.executor.ray import actors
    from mdf.executor.ray.parts import targets

    began = time.perf_counter()
    stages, rec = plan.recipe.stages, plan.recipe
    available = ray.available_resources()
    groups = fuse_groups(stages, spec.fuse_stages)
    heads = [g[0] for g in groups]  # a group's stages share resources and replicas
    pipe = Pipeline(plan, groups, replica_counts([stages[i] for i in heads], available, heads))
    pipe.free_before = {k: v for k, v in available.items() if k in ("CPU", "GPU")}
    store = rec.storage  # each actor applies the recipe's storage: settings in its own process
    parts = targets({"writer": rec.writer, "rejected": rec.rejected})  # s3:// outputs: uploaded by the actors
    fail = rec.on_damaged_input == "fail"
    if whole_shards(spec, pipe):
        _same_resources(stages)
        pipe.whole_shards, pipe.groups = True, [list(range(len(stages)))]
        pipe.replicas = replica_counts([stages[0]], available)
        name = f"{run_id}-{'+'.join(s.name for s in stages)}"  # as a fused group's chain actors are named
        cls = ray.remote(actors.ShardActor)
        runners = [
            cls.options(**actor_options(stages[0].resources, spec, f"{name}-{k}")).remote(
                rec.reader, plan.batch_rows, list(enumerate(stages)), key_state, (rec.writer, rec.rejected), store,
                parts, fail,
            )
            for k in range(pipe.replicas[0])
        ]  # fmt: skip
        pipe.stages, pipe.writers, pipe.max_in_flight = [runners], runners, len(runners)
    else:
        n_loaders = spec.loaders if spec.loaders != "auto" else max(1, min(len(plan.shards), 2))
        n_loaders = min(n_loaders, max(1, len(plan.shards)))
        n_writers = spec.writers if spec.writers != "auto" else n_loaders
        io_opts = {"num_cpus": 0, "max_restarts": 0}
        loader = ray.remote(actors.Loader).options(**io_opts)
        pipe.loaders = [
            loader.remote(rec.reader, plan.shards[i::n_loaders], plan.batch_rows, store, fail) for i in range(n_loaders)
        ]
        worker = ray.remote(actors.StageWorker)
        for members, n in zip(groups, pipe.replicas, strict=True):
            name = "+".join(stages[i].name for i in members)
            opts = [actor_options(stages[members[0]].resources, spec, f"{run_id}-{name}-{k}") for k in range(n)]
            specs = [(i, stages[i]) for i in members]
            pipe.stages.append([worker.options(**o).remote(specs, key_state, rec.rejected is not None, store)
                                for o in opts])  # fmt: skip
        writer = ray.remote(actors.ShardWriter).options(**io_opts)
        pipe.writers = [writer.remote(rec.writer, rec.rejected, store, parts) for _ in range(n_writers)]
        pipe.max_in_flight = (
            spec.max_in_flight
            if spec.max_in_flight != "auto"
            else plan.max_in_flight or auto_max_in_flight(pipe.replicas, n_loaders)
        )
    placed.append(pipe)
    _wait_ready([*pipe.loaders, *pipe.writers, *(a for g in pipe.stages for a in g)], spec.placement_timeout_s)
    replicas = [a for g in pipe.stages for a in g]
    where = ray.get([a.__ray_call__.remote(_node_id) for a in replicas])
    pipe.nodes = {id(a): node for a, node in zip(replicas, where, strict=True)}
    pipe.startup_s = time.perf_counter() - began
    return pipe


def whole_shards(spec: RayParams, pipe: Pipeline) -> bool:
    """``whole_shards: auto``: on when all stages run in one actor (one fused group), no chain bound is set and
    every replica gets a shard: then a chain per batch pipelines nothing across actors and only adds
    object-store hops (see :mod:`mdf.executor.ray.shards`). ``max_in_flight`` or ``max_bytes_in_flight`` asks
    for chains; so do fewer shards than replicas, where chains spread one shard's batches over them."""
    if spec.whole_shards != "auto":
        return spec.whole_shards
    one_group = len(pipe.groups) == 1 and len(pipe.plan.shards) >= pipe.replicas[0]
    return one_group and spec.max_in_flight == "auto" and spec.max_bytes_in_flight is None


def _same_resources(stages: list[StageSpec]) -> None:
    """Whole-shard replicas run every stage (``whole_shards: true``): the stages must ask for the same resources
    (the replicas are the first stage's)."""
    for i, stage in enumerate(stages):
        if stage.resources != stages[0].resources:
            raise PlacementError(
                f"executor.whole_shards: true runs every stage in one actor, but stages[{i}] '{stage.name}' asks "
                f"for other resources than stages[0]; give the stages the same resources, or set whole_shards: auto"
            )


def _node_id(_actor: Any) -> str:
    import ray

    return str(ray.get_runtime_context().get_node_id())


def _wait_ready(everyone: list[Any], timeout: float) -> None:
    import ray

    ready, pending = ray.wait([a.__ray_ready__.remote() for a in everyone], num_returns=len(everyone), timeout=timeout)
    ray.get(ready)  # surfaces a constructor error (bad params, missing dependency) as itself
    if pending:
        raise RuntimeError(f"{len(pending)} actor(s) did not start within {timeout}s")
