"""The actors of a Ray run: loaders, stage replicas and writers for the chain, and the whole-shard replica.

Each is a thin wrapper, for Ray, around the shard loop's own pieces (:mod:`mdf.executor.shard`): a loader is the
read step, a stage replica is :class:`~mdf.executor.shard.Stages`, a writer holds a
:class:`~mdf.executor.shard.Sink` per shard, and :class:`ShardActor` is the very
:class:`~mdf.executor.shard.ShardRunner` an inline worker thread runs. They are plain classes wrapped with
``ray.remote`` by the driver, so the same code is unit-testable without Ray. Every actor builds its components
itself from recipe specs (plugins are loaded in the worker through the same entry points), so models load once per
actor and nothing heavy is pickled.

Operator counters travel *with the batch*: each stage appends the per-operator counts of that batch to the payload
and the writer reports them once the batch is written. A batch retried after a crash therefore counts once, and a
replica that died takes none of the run's numbers with it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from mdf.executor.base import Outputs
from mdf.executor.batches import BatchDone, BatchRead, LoaderDone, ShardDone, ShardEnd, shard_batches
from mdf.executor.ray.parts import PartUploads, node_address
from mdf.executor.shard import ShardRunner, Sink, Stages
from mdf.executor.threads import ByteBudget, auto_bytes_in_flight, prefetch
from mdf.io.base import Reader, Shard
from mdf.metrics import OperatorMetrics
from mdf.pandas_probe import defer_pandas
from mdf.plugins import load_plugins
from mdf.recipe import ComponentSpec, StageSpec
from mdf.resolve import build_component
from mdf.storage.errors import StorageError

# payload passed from actor to actor: (kept rows, rejected pieces, per-operator metrics of this batch)
Payload = tuple[pa.RecordBatch, list[pa.RecordBatch], list[OperatorMetrics]]


def _set_up_process(storage: Any) -> None:
    """What the ``mdf`` command does for its own process, done in this actor's: pyarrow kept from importing pandas
    (:mod:`mdf.pandas_probe`: ~0.5 s of CPU per actor where pandas is installed), and the recipe's ``storage:``
    settings (the driver's :func:`mdf.storage.configure` does not reach it); ``None``: the AWS chain and
    environment, as in the driver."""
    defer_pandas()
    if storage is not None:
        from mdf.storage import configure

        configure(storage)


def warm_up_cpu_s(first: tuple[float, int] | None, cpu_s: float, rows: int) -> float:
    """CPU seconds a replica's first batch took beyond the per-row cost of its later batches.

    Why: a fresh process's first batches pay for its first touches of memory and the operators' first calls,
    once per replica: 0.11-0.18 CPU-s over a steady 0.05-0.08 s batch in the namespace cluster's replicas (the
    same ``StageWorker`` in one process without Ray: 0.37, 0.24, 0.10 and 0.06 s for its first four 4,000-row
    batches, then 0.028 s). Counted as per-row cost, it inflates the projection made from a short run, and a
    run with N replicas pays it N times. The scale-out projection leaves start-up out, so it takes the stage's
    CPU less this. Only the first batch's excess is taken: the second ran 0.03-0.05 s over in those replicas,
    and stays counted as per-row cost.
    ``first``: (CPU seconds from the end of construction through the first batch, the first batch's rows); 0
    without a later batch to measure the steady cost by."""
    if first is None or rows <= first[1]:
        return 0.0
    first_cpu, first_rows = first
    steady = (cpu_s - first_cpu) / (rows - first_rows)
    return max(0.0, first_cpu - steady * first_rows)


class Loader:
    """Owns a disjoint list of shards and hands out one batch per call, reading the next one meanwhile (the shard
    loop's read step, :func:`~mdf.executor.batches.shard_batches`, with its offsets and damage check)."""

    def __init__(
        self, reader: ComponentSpec, shards: list[Shard], batch_rows: int, storage: Any = None,
        fail_on_damage: bool = False,
    ) -> None:  # fmt: skip
        _set_up_process(storage)
        self.reader = build_component(load_plugins().readers, reader, "reader")
        self.shards = shards
        self.batch_rows = batch_rows
        self.fail_on_damage = fail_on_damage
        self._items = prefetch(self._batches())
        self.cpu0 = time.process_time()

    def _batches(self) -> Iterator[tuple[BatchRead | ShardEnd, Payload | None]]:
        for shard in self.shards:
            count = 0
            for read, kept, rejected in shard_batches(self.reader, shard, self.batch_rows, self.fail_on_damage):
                yield read, (kept, rejected, [])
                count += 1
            yield ShardEnd(shard.id, count), None  # end of shard: ``count`` batches were sent

    def next(self) -> tuple[BatchRead | ShardEnd | LoaderDone, Payload | None]:
        """Return ``(message, payload)``; the driver reads only the message and forwards the payload's reference."""
        item = next(self._items, None)
        return (LoaderDone(), None) if item is None else item

    def stats(self) -> dict[str, Any]:
        """CPU seconds of this process (decoding, Ray's transfers): the scale-out projection's reader cost."""
        return {"cpu_s": time.process_time() - self.cpu0, "pid": os.getpid()}


class StageWorker:
    """One replica of a stage, or of consecutive stages fused into one actor (see ``fuse_stages``): their
    operators (:class:`~mdf.executor.shard.Stages`, built in this process), batch after batch."""

    def __init__(
        self,
        stages: list[tuple[int, StageSpec]],
        key_state: Any = None,
        keep_rejected: bool = True,
        storage: Any = None,
    ) -> None:
        _set_up_process(storage)
        self.stages = Stages(load_plugins(), stages, key_state, keep_rejected)

    def process(self, meta: BatchRead, payload: Payload) -> Payload:
        kept, rejected, counters = payload
        kept, rejected, mine = self.stages.process(meta, kept, rejected)
        return kept, rejected, counters + mine

    def stats(self) -> dict[str, Any]:
        return _stage_stats(self.stages)


def _stage_stats(st: Stages, share: float = 1.0) -> dict[str, Any]:
    """A replica's busy time, CPU (``share`` of the process's: the rest was another job's, the writing's) and
    first-batch warm-up, for the projection and the utilisation figures."""
    import ray

    cpu_s = time.process_time() - st.cpu0
    return {
        "busy_s": sum(st.stage_busy_s),
        "stage_busy_s": st.stage_busy_s,
        "alive_s": time.perf_counter() - st.started,
        "cpu_s": cpu_s * share,
        "warmup_cpu_s": warm_up_cpu_s(st.first, cpu_s, st.rows) * share,
        "batches": st.batches,
        "pid": os.getpid(),
        "node_id": ray.get_runtime_context().get_node_id(),
    }


def _outputs(writer: ComponentSpec, rejected: ComponentSpec | None, targets: Any) -> tuple[Outputs, PartUploads]:
    """The writers of a Ray actor; ``targets``: the ``s3://`` outputs' :class:`mdf.executor.ray.parts.PartTarget` by
    role, whose parts are written in this node's own folder and uploaded to the run's staging prefix on commit."""
    uploads = PartUploads(targets or {})
    writers = load_plugins().writers
    w = build_component(writers, uploads.localize(writer, "writer"), "writer")
    r = build_component(writers, uploads.localize(rejected, "rejected"), "rejected") if rejected else None
    return Outputs(w, r), uploads


class ShardWriter:
    """Writes the batches of the shards it owns, in batch order, through a :class:`~mdf.executor.shard.Sink` per
    shard (a writer thread, as inline), and commits each shard atomically.

    Ray runs a caller's calls on one actor in submission order, and the driver submits a shard's writes in batch
    order, so batches normally arrive in order; a batch that arrives early is held until its turn anyway, so
    the part file has the rows in input order whatever happens upstream.
    """

    def __init__(
        self, writer: ComponentSpec, rejected: ComponentSpec | None, storage: Any = None, targets: Any = None
    ) -> None:
        _set_up_process(storage)
        self.outputs, self.uploads = _outputs(writer, rejected, targets)
        self.budget = ByteBudget(auto_bytes_in_flight())
        self._sinks: dict[str, Sink] = {}
        self._next: dict[str, int] = {}
        self._held: dict[str, dict[int, Payload]] = {}
        self.cpu0 = time.process_time()
        self.busy_s = 0.0  # of the sinks already committed

    def write(self, meta: BatchRead, payload: Payload) -> BatchDone:
        shard, index = meta.shard, meta.index
        sink = self._sinks.get(shard)
        if sink is None:
            sink = self._sinks[shard] = Sink(self.outputs, shard, self.budget)
        self._held.setdefault(shard, {})[index] = payload
        expected = self._next.get(shard, 0)
        while expected in self._held[shard]:
            kept, rejected, _ = self._held[shard].pop(expected)
            sink.write(kept, rejected)
            expected += 1
        self._next[shard] = expected
        kept, rejected, counters = payload
        return BatchDone.of(meta, kept, rejected, counters)

    def commit(self, shard: str, batches: int) -> list[str]:
        if self._next.get(shard, 0) != batches:
            raise RuntimeError(f"shard {shard}: {self._next.get(shard, 0)} of {batches} batches written at commit")
        self._held.pop(shard, None)
        sink = self._sinks.pop(shard, None) or Sink(self.outputs, shard, self.budget)  # a shard with no batch
        try:
            return self.uploads.commit(sink.commit().result())
        finally:
            self.busy_s += sink.busy_s

    def abort_all(self) -> None:
        for sink in self._sinks.values():
            sink.stop()
        self.outputs.close()
        self.uploads.close()

    def stats(self) -> dict[str, Any]:
        busy = self.busy_s + sum(s.busy_s for s in self._sinks.values())
        return {"busy_s": busy, "cpu_s": time.process_time() - self.cpu0, "pid": os.getpid()}


class _NodeReader:
    """The recipe's reader, with an object store that fails for good naming this node, as an upload does: in
    whole-shard mode the worker hosts read the input, and one of them may be the node that cannot reach it."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader

    def read(self, shard: Shard, batch_rows: int) -> Iterator[pa.RecordBatch]:
        try:
            yield from self.reader.read(shard, batch_rows)
        except StorageError as exc:
            raise type(exc)(exc.url, f"{exc.message} (reading on the node at {node_address()})") from None


class ShardActor:
    """A replica that runs whole shards (``whole_shards``): the inline worker thread's
    :class:`~mdf.executor.shard.ShardRunner`, in its own process; it returns each shard's batch messages with
    its committed parts (:class:`~mdf.executor.batches.ShardDone`).

    Why: in a chain a batch is put into Ray's object store twice (loader -> stage -> writer) and costs the
    driver a round trip, while W1's filters take a few microseconds a row. Here nothing but a shard's counts
    crosses the store, the reader and the writer run beside the stages on the replica's node (on a cluster,
    the worker host reads and writes S3 itself instead of the driver's host), and the one-batch read-ahead
    overlaps decoding with the operators. A retried call (the actor restarted after a crash) re-runs the whole
    shard: its parts were not committed, and the key state's claims are idempotent per shard slot."""

    def __init__(
        self,
        reader: ComponentSpec,
        batch_rows: int,
        stages: list[tuple[int, StageSpec]],
        key_state: Any,
        outputs: tuple[ComponentSpec, ComponentSpec | None],
        storage: Any = None,
        targets: Any = None,
        fail_on_damage: bool = False,
    ) -> None:
        _set_up_process(storage)
        plugins = load_plugins()
        self.outputs, self.uploads = _outputs(outputs[0], outputs[1], targets)
        self.stages = Stages(plugins, stages, key_state, outputs[1] is not None)
        self.messages: list[tuple[BatchRead, BatchDone]] = []
        self.runner = ShardRunner(
            _NodeReader(build_component(plugins.readers, reader, "reader")),  # type: ignore[arg-type]
            batch_rows, self.stages, self.outputs, ByteBudget(auto_bytes_in_flight()),
            lambda read, done: self.messages.append((read, done)), fail_on_damage,
        )  # fmt: skip

    def run(self, shard: Shard) -> ShardDone:
        """Read (one batch ahead, in a thread), process, and write in a thread of its own (at most two batches
        queued), as an inline shard thread does; then commit the shard's parts."""
        self.messages = []
        files = self.uploads.commit(self.runner.run_all(shard))
        reads, dones = [r for r, _ in self.messages], [d for _, d in self.messages]
        return ShardDone(shard.id, reads, dones, files)

    def abort_all(self) -> None:
        self.runner.stop()
        self.uploads.close()

    def stats(self) -> dict[str, Any]:
        """A stage replica's stats, and the writer's under ``write_*``. One process does all three, so its CPU is
        split between the stages and the writing by their busy time (reading overlaps both, in its thread)."""
        cpu = time.process_time() - self.stages.cpu0
        busy, write = sum(self.stages.stage_busy_s), sum(s.busy_s for s in self.runner.sinks)
        share = busy / (busy + write) if busy + write > 0 else 1.0
        return {**_stage_stats(self.stages, share), "write_busy_s": write, "write_cpu_s": cpu * (1 - share)}
