"""The Ray executor's whole-shard mode: each replica reads, processes and writes whole shards (``whole_shards``).

When every stage of the recipe runs in one actor (one fused group: same resources, same replicas), a chain per
batch buys no pipelining between actors, only its costs: each batch is put into the object store twice (loader
-> replica -> writer), the driver makes a round trip for it, and on a cluster the loaders and writers, which
reserve no CPU, sit beside the driver, so every batch crosses hosts twice and the driver's host does the
reading and writing. In this mode the driver hands out shards, one at a time per replica, to
:class:`mdf.executor.actors.ShardActor` actors and gets back counts: the replica's host reads its shard
(from S3 on a cluster), runs the stages and writes the shard's parts with the shard runner an inline shard
thread runs (:class:`mdf.executor.shard.ShardRunner`).

The bookkeeping is the chain's: the same :class:`~mdf.executor.batches.PassCounter` per batch, the commit recorded
and the checkpoint written per shard, the same part files. What the mode gives up is pipelining *across* actors, which
a single group does not have anyway; recipes whose stages differ in resources or replicas keep the chains.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from mdf.executor.batches import PassCounter, ShardDone
from mdf.io.base import Shard
from mdf.metrics import RunMetrics
from mdf.runlog import LOG
from mdf.state import Checkpoint, KeyState

if TYPE_CHECKING:
    from mdf.executor.ray import Pipeline, RayExecutor


def start_runners(ex: RayExecutor, run_id: str, key_state: KeyState | None, available: dict[str, float]) -> list[Any]:
    """One :class:`ShardActor` per replica, each running every stage of the recipe: the stages' one fused group
    (``auto``), or all of them when ``whole_shards: true`` (then they must ask for the same resources; the
    replicas are the first stage's)."""
    import ray

    from mdf.executor import actors
    from mdf.executor.placement import PlacementError, actor_options, replica_counts
    from mdf.storage.parts import targets

    plan, spec = ex.plan, ex.params
    rec = plan.recipe
    for i, stage in enumerate(rec.stages):
        if stage.resources != rec.stages[0].resources:
            raise PlacementError(
                f"executor.whole_shards: true runs every stage in one actor, but stages[{i}] '{stage.name}' asks "
                f"for other resources than stages[0]; give the stages the same resources, or set whole_shards: auto"
            )
    ex.groups = [list(range(len(rec.stages)))]
    ex.replicas = replica_counts([rec.stages[0]], available)
    specs = list(enumerate(rec.stages))
    parts = targets({"writer": rec.writer, "rejected": rec.rejected})  # s3:// outputs: uploaded by the runners
    cls = ray.remote(actors.ShardActor)
    name = f"{run_id}-{'+'.join(s.name for s in rec.stages)}"  # as a fused group's chain actors are named
    resources = rec.stages[0].resources
    return [
        cls.options(**actor_options(resources, spec, f"{name}-{k}")).remote(
            rec.reader,
            plan.batch_rows,
            specs,
            key_state,
            (rec.writer, rec.rejected),
            rec.storage,
            parts,
            rec.on_damaged_input == "fail",
        )
        for k in range(ex.replicas[0])
    ]


def run_shards(
    ex: RayExecutor, pipe: Pipeline, counter: PassCounter, progress: Any, checkpoint: Checkpoint | None, start: float
) -> RunMetrics:
    """Hand out the plan's shards, in order, to whichever replica is free; count each shard as it comes back.

    A replica holds one shard at a time, so the last shards go to the replicas that finish first, and the
    driver's work is one round trip per shard instead of one per batch. A replica that is lost (its process or
    its node died, so its call ends in an actor error, not an operator's) is dropped and its shard runs again
    on another: nothing of a shard counts before it comes back committed, a re-run writes a fresh part, and the
    key state answers its claims as it answered the first run's. The run fails only when no replica is left."""
    import ray
    from ray.exceptions import RayActorError

    queue = deque(ex.plan.shards)
    live: list[Any] = pipe.stages[0]
    in_flight: dict[Any, tuple[Any, Shard]] = {}

    def submit(runner: Any) -> None:
        if queue:
            shard = queue.popleft()
            in_flight[runner.run.remote(shard)] = (runner, shard)

    for runner in live:
        submit(runner)
    with ex._driving(pipe, progress):
        while in_flight:
            ex.peak_in_flight = max(ex.peak_in_flight, len(in_flight))
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in ready:
                runner, shard = in_flight.pop(ref)
                try:
                    done: ShardDone = ray.get(ref)
                except RayActorError as exc:
                    _lose(pipe, runner, shard, exc)
                    queue.appendleft(shard)
                    busy = {id(r) for r, _ in in_flight.values()}
                    for idle in [r for r in live if id(r) not in busy]:
                        submit(idle)
                    continue
                submit(runner)  # before counting: the replica starts its next shard while the driver counts
                for read in done.reads:
                    counter.read(read)
                for d in done.dones:
                    counter.done(d)
                ex._committed(done.files, done.shard, checkpoint, counter)
            if progress is not None:
                progress.update_counts(counter.metrics)
    return ex._finish(counter, pipe, start)


def _lose(pipe: Pipeline, runner: Any, shard: Shard, exc: BaseException) -> None:
    """Drop a replica whose process or node is gone (kept in ``pipe.lost``: teardown still kills a restarted
    one); its shard goes back to the queue. With no replica left the run fails with the actor's error."""
    pipe.stages[0].remove(runner)
    pipe.lost.append(runner)
    if not pipe.stages[0]:
        raise exc
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    LOG.warning("a replica was lost (%s); shard %s runs again on one of the %d left", first, shard.id,
                len(pipe.stages[0]))  # fmt: skip
