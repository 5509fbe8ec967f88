"""The Ray executor's whole-shard mode: each replica reads, processes and writes whole shards (``whole_shards``).

When every stage of the recipe runs in one actor (one fused group: same resources, same replicas), a chain per
batch buys no pipelining between actors, only its costs: each batch is put into the object store twice (loader
-> replica -> writer), the driver makes a round trip for it, and on a cluster the loaders and writers, which
reserve no CPU, sit beside the driver, so every batch crosses hosts twice and the driver's host does the
reading and writing. In this mode the driver hands out shards, one at a time per replica, to
:class:`mdf.executor.ray.actors.ShardActor` actors and gets back counts: the replica's host reads its shard
(from S3 on a cluster), runs the stages and writes the shard's parts with the shard runner an inline shard
thread runs (:class:`mdf.executor.shard.ShardRunner`).

The bookkeeping is the chain's (:class:`~mdf.executor.ray.book.Book`): the same counts per batch, the commit
recorded and the checkpoint written per shard, the same part files. What the mode gives up is pipelining *across*
actors, which a single group does not have anyway; recipes whose stages differ in resources or replicas keep the
chains.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from mdf.executor.batches import ShardDone
from mdf.executor.ray.book import Book
from mdf.executor.ray.placement import NODE_CHECK_S
from mdf.io.base import Shard
from mdf.metrics import RunMetrics
from mdf.runlog import LOG


def run_shards(book: Book) -> RunMetrics:
    """Hand out the plan's shards, in order, to whichever replica is free; count each shard as it comes back.

    A replica holds one shard at a time, so the last shards go to the replicas that finish first, and the
    driver's work is one round trip per shard instead of one per batch. A replica that is lost (its process or
    its node died, so its call ends in an actor error, not an operator's) is dropped and its shard runs again
    on another: nothing of a shard counts before it comes back committed, a re-run writes a fresh part, and the
    key state answers its claims as it answered the first run's. The run fails only when no replica is left."""
    import ray
    from ray.exceptions import RayActorError

    pipe, counter = book.pipe, book.counter
    queue = deque(pipe.plan.shards)
    live: list[Any] = pipe.stages[0]
    in_flight: dict[Any, tuple[Any, Shard]] = {}

    def submit(runner: Any) -> None:
        if queue:
            shard = queue.popleft()
            in_flight[runner.run.remote(shard)] = (runner, shard)

    for runner in live:
        submit(runner)
    with book.driving():
        while in_flight:
            book.in_flight(len(in_flight))
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=NODE_CHECK_S)
            if not ready:  # a long shard, or a replica waiting for a restart its dead node cannot give
                pipe.stop_stranded()
                continue
            for ref in ready:
                runner, shard = in_flight.pop(ref)
                try:
                    done: ShardDone = ray.get(ref)
                except RayActorError as exc:
                    _lose(book, runner, shard, exc)
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
                book.committed(done.files, done.shard)
            book.show()
    return book.finish()


def _lose(book: Book, runner: Any, shard: Shard, exc: BaseException) -> None:
    """Drop a replica whose process or node is gone; its shard goes back to the queue. With no replica left the
    run fails with the actor's error."""
    left = book.pipe.lose(runner)
    if not left:
        raise exc
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    LOG.warning("a replica was lost (%s); shard %s runs again on one of the %d left", first, shard.id, left)
