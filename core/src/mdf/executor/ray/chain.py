"""The chain driver: pipeline parallelism by ObjectRef chaining, bounded in flight.

For every batch a loader hands out, the driver submits one chain without waiting::

    meta, data = loader.next()                       # the driver reads only ``meta`` (a few numbers)
    ref = stage_1[least loaded].process(meta, data)  # each call takes the previous call's ObjectRef
    ...
    ref = stage_k[least loaded].process(meta, ref)
    done = writer[owner of the shard].write(meta, ref)  # returns counts, never rows

so stage ``k`` works on batch ``n`` while stage ``k-1`` works on ``n+1``, and the rows move between actors
through the object store without passing through the driver. At most ``max_in_flight`` chains (and, if set,
``max_bytes_in_flight`` input bytes) are alive at once: when the bound is reached the driver waits for a chain
to finish before asking loaders for more, which is the backpressure that keeps a slow stage from filling
memory. Writers own disjoint shards, write a shard's batches in order and commit its part file atomically when
its last batch is written, so the files are the inline executor's, byte for byte in content.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from mdf.executor.batches import BatchRead, LoaderDone, ShardEnd
from mdf.executor.ray.book import Book
from mdf.executor.ray.params import RayParams
from mdf.executor.ray.placement import NODE_CHECK_S, Pipeline
from mdf.metrics import RunMetrics


@dataclass
class Chain:
    """A batch's chain in flight: its shard, input bytes and the replicas it holds a place on."""

    shard: str
    nbytes: int
    replicas: list[Any]


def run_chains(book: Book, params: RayParams) -> RunMetrics:
    """Drive the pass's loaders, stage replicas and writers until every shard is committed."""
    import ray

    pipe, counter = book.pipe, book.counter
    shard_owner = {s.id: pipe.writers[i % len(pipe.writers)] for i, s in enumerate(pipe.plan.shards)}
    next_call: dict[Any, Any] = {}  # meta ref -> (loader, payload ref)
    for loader in pipe.loaders:
        meta_ref, payload_ref = loader.next.options(num_returns=2).remote()
        next_call[meta_ref] = (loader, payload_ref)
    queued: list[tuple[Any, BatchRead, Any]] = []  # loader, message, payload ref awaiting capacity
    in_flight: dict[Any, Chain] = {}
    bytes_in_flight = 0
    expected: dict[str, int] = {}
    written: dict[str, int] = defaultdict(int)
    commits: dict[Any, str] = {}  # commit ref -> shard: a shard is done (checkpoint) when its ref is

    def commit_if_written(shard: str) -> None:
        if written[shard] == expected.get(shard):
            commits[shard_owner[shard].commit.remote(shard, expected[shard])] = shard

    with book.driving():
        while next_call or queued or in_flight:
            while queued and has_room(params, pipe.max_in_flight, len(in_flight), bytes_in_flight, queued[0][1].nbytes):
                loader, meta, payload_ref = queued.pop(0)
                ref, chain = submit(pipe, shard_owner, meta, payload_ref)
                in_flight[ref] = chain
                bytes_in_flight += chain.nbytes
                meta_ref, payload_ref = loader.next.options(num_returns=2).remote()
                next_call[meta_ref] = (loader, payload_ref)
            book.in_flight(len(in_flight), bytes_in_flight)
            waiting = list(in_flight) + (list(next_call) if not queued else []) + list(commits)
            ready, _ = ray.wait(waiting, num_returns=1, timeout=NODE_CHECK_S)
            if not ready:  # a slow stage, or a replica waiting for a restart its dead node cannot give
                pipe.stop_stranded()
                continue
            ready, _ = ray.wait(waiting, num_returns=len(waiting), timeout=0)
            for ref in ready:
                if ref in commits:
                    book.committed(ray.get(ref), commits.pop(ref))
                elif ref in in_flight:
                    chain = in_flight.pop(ref)
                    bytes_in_flight -= chain.nbytes
                    for actor in chain.replicas:
                        pipe.load[actor] -= 1
                    counter.done(ray.get(ref))
                    written[chain.shard] += 1
                    commit_if_written(chain.shard)
                else:
                    loader, payload_ref = next_call.pop(ref)
                    meta = ray.get(ref)
                    if isinstance(meta, LoaderDone):
                        continue
                    if isinstance(meta, ShardEnd):
                        expected[meta.shard] = meta.batches
                        commit_if_written(meta.shard)
                        meta_ref, payload_ref = loader.next.options(num_returns=2).remote()
                        next_call[meta_ref] = (loader, payload_ref)
                        continue
                    counter.read(meta)
                    queued.append((loader, meta, payload_ref))
            book.show()
        for ref, shard in commits.items():
            book.committed(ray.get(ref), shard)
    return book.finish()


def has_room(params: RayParams, max_in_flight: int, chains: int, nbytes: int, next_bytes: int) -> bool:
    """Whether one more chain fits: fewer than ``max_in_flight``, and within ``max_bytes_in_flight`` (one chain
    always fits, however large its batch)."""
    if chains >= max_in_flight:
        return False
    cap = params.max_bytes_in_flight
    return cap is None or chains == 0 or nbytes + next_bytes <= cap


def submit(pipe: Pipeline, owner: dict[str, Any], meta: BatchRead, ref: Any) -> tuple[Any, Chain]:
    """Submit one batch's chain: each stage group's least loaded replica, then the shard's writer."""
    used = []
    for k in range(len(pipe.stages)):
        actor = pipe.least_loaded(k)
        pipe.load[actor] += 1
        used.append(actor)
        ref = actor.process.remote(meta, ref)
    done = owner[meta.shard].write.remote(meta, ref)
    return done, Chain(meta.shard, meta.nbytes, used)
