"""The actors of a Ray run: loaders, stage replicas and writers, plus the key-state seam.

They are plain classes wrapped with ``ray.remote`` by the driver, so the same code is unit-testable without
Ray. Every actor builds its components itself from recipe specs (plugins are loaded in the worker through the
same entry points), so models load once per actor and nothing heavy is pickled.

Metrics travel *with the batch*: each stage appends the per-operator counts of that batch to the payload and
the writer reports them once the batch is written. A batch retried after a crash therefore counts once, and a
replica that died takes none of the run's numbers with it.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pyarrow as pa

from mdf.damage import note_damage
from mdf.executor.base import Outputs, build_stage, run_chain
from mdf.executor.batches import BatchDone, BatchRead, LoaderDone, ShardDone, ShardEnd, read_batch
from mdf.executor.failures import in_stage
from mdf.executor.passes import attach_state
from mdf.executor.threads import prefetch
from mdf.io.base import Shard
from mdf.metrics import OperatorMetrics, RunMetrics
from mdf.pandas_probe import defer_pandas
from mdf.plugins import load_plugins
from mdf.recipe import ComponentSpec, StageSpec
from mdf.resolve import build_component
from mdf.storage.errors import StorageError
from mdf.storage.parts import PartUploads, node_address

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
    """Owns a disjoint list of shards and hands out one batch per call, reading the next one meanwhile."""

    def __init__(self, reader: ComponentSpec, shards: list[Shard], batch_rows: int, storage: Any = None) -> None:
        _set_up_process(storage)
        self.reader = build_component(load_plugins().readers, reader, "reader")
        self.shards = shards
        self.batch_rows = batch_rows
        self._items = self._prefetched()
        self.cpu0 = time.process_time()

    def _batches(self) -> Iterator[tuple[Shard, int, int, pa.RecordBatch | None]]:
        for shard in self.shards:
            offset, count = 0, 0
            for batch in self.reader.read(shard, self.batch_rows):
                yield shard, count, offset, batch
                offset += batch.num_rows
                count += 1
            yield shard, count, offset, None  # end of shard: ``count`` batches were sent

    def _prefetched(self) -> Iterator[tuple[Shard, int, int, pa.RecordBatch | None]]:
        yield from prefetch(self._batches())

    def next(self) -> tuple[BatchRead | ShardEnd | LoaderDone, Payload | None]:
        """Return ``(message, payload)``; the driver reads only the message and forwards the payload's reference."""
        item = next(self._items, None)
        if item is None:
            return LoaderDone(), None
        shard, index, offset, batch = item
        if batch is None:
            return ShardEnd(shard.id, index), None
        meta, kept, rejected = read_batch(shard, index, offset, batch)
        return meta, (kept, rejected, [])

    def stats(self) -> dict[str, Any]:
        """CPU seconds of this process (decoding, Ray's transfers): the scale-out projection's reader cost."""
        return {"cpu_s": time.process_time() - self.cpu0, "pid": os.getpid()}


class StageWorker:
    """One replica of a stage, or of consecutive stages fused into one actor (see ``fuse_stages``): their
    operators, built in this process, applied stage after stage, batch after batch."""

    def __init__(
        self,
        stages: list[tuple[int, StageSpec]],
        key_state: Any = None,
        keep_rejected: bool = True,
        storage: Any = None,
    ) -> None:
        _set_up_process(storage)
        self.keep_rejected = keep_rejected
        plugins = load_plugins()
        self.names = [stage.name for _, stage in stages]
        self.stages = [build_stage(plugins, stage, index) for index, stage in stages]
        for (index, _), ops in zip(stages, self.stages, strict=True):
            attach_state(index, ops, key_state)  # a KeyState holding bucket actor handles
        self.started = time.perf_counter()
        self.cpu0 = time.process_time()  # the whole process: rayon threads and Ray's transfers count too
        self.stage_busy_s = [0.0] * len(stages)
        self.batches = 0
        self.rows = 0
        self.first: tuple[float, int] | None = None  # (CPU seconds through the first batch, its rows)

    def process(self, meta: BatchRead, payload: Payload) -> Payload:
        batch, rejected, op_metrics = payload
        ctx = meta.context()
        for k, operators in enumerate(self.stages):
            start = time.perf_counter()
            with in_stage(self.names[k]):
                batch, more = run_chain(operators, batch, ctx, self.keep_rejected)
            rejected = rejected + more
            for op in operators:  # hand this batch's counts downstream, start afresh
                op_metrics.append(op.metrics)
                op.metrics = OperatorMetrics(op.name, op.kind)
            self.stage_busy_s[k] += time.perf_counter() - start
        self.batches += 1
        self.rows += meta.rows
        if self.first is None:
            self.first = (time.process_time() - self.cpu0, meta.rows)
        return batch, rejected, op_metrics

    def stats(self) -> dict[str, Any]:
        import ray

        cpu_s = time.process_time() - self.cpu0
        return {
            "busy_s": sum(self.stage_busy_s),
            "stage_busy_s": self.stage_busy_s,
            "alive_s": time.perf_counter() - self.started,
            "cpu_s": cpu_s,
            "warmup_cpu_s": warm_up_cpu_s(self.first, cpu_s, self.rows),
            "batches": self.batches,
            "pid": os.getpid(),
            "node_id": ray.get_runtime_context().get_node_id(),
        }


class ShardWriter:
    """Writes the batches of the shards it owns, in batch order, and commits each shard atomically.

    Ray runs a caller's calls on one actor in submission order, and the driver submits a shard's writes in batch
    order, so batches normally arrive in order; a batch that arrives early is held until its turn anyway, so
    the part file has the rows in input order whatever happens upstream.
    """

    def __init__(
        self, writer: ComponentSpec, rejected: ComponentSpec | None, storage: Any = None, targets: Any = None
    ) -> None:
        """``targets``: the ``s3://`` outputs' :class:`mdf.storage.parts.PartTarget` by role; their parts are
        written in this node's own folder and uploaded to the run's staging prefix on commit."""
        _set_up_process(storage)
        self.uploads = PartUploads(targets or {})
        writers = load_plugins().writers
        w = build_component(writers, self.uploads.localize(writer, "writer"), "writer")
        r = build_component(writers, self.uploads.localize(rejected, "rejected"), "rejected") if rejected else None
        self.outputs = Outputs(w, r)
        self._next: dict[str, int] = {}
        self._held: dict[str, dict[int, Payload]] = {}
        self.busy_s = 0.0
        self.cpu0 = time.process_time()

    def write(self, meta: BatchRead, payload: Payload) -> BatchDone:
        start = time.perf_counter()
        shard, index = meta.shard, meta.index
        self._held.setdefault(shard, {})[index] = payload
        expected = self._next.get(shard, 0)
        while expected in self._held[shard]:
            kept, rejected, _ = self._held[shard].pop(expected)
            self.outputs.writer.write(kept, shard)
            if self.outputs.rejected is not None:
                for r in rejected:
                    self.outputs.rejected.write(r, shard)
            expected += 1
        self._next[shard] = expected
        self.busy_s += time.perf_counter() - start
        kept, rejected, op_metrics = payload
        n_rejected = sum(r.num_rows for r in rejected)
        by_reader = n_rejected - sum(m.rows_rejected for m in op_metrics)
        return BatchDone(shard, kept.num_rows, n_rejected, by_reader, op_metrics)

    def commit(self, shard: str, batches: int) -> list[str]:
        if self._next.get(shard, 0) != batches:
            raise RuntimeError(f"shard {shard}: {self._next.get(shard, 0)} of {batches} batches written at commit")
        self._held.pop(shard, None)
        return self.uploads.commit(self.outputs.commit(shard))

    def abort_all(self) -> None:
        self.outputs.close()
        self.uploads.close()

    def stats(self) -> dict[str, Any]:
        return {"busy_s": self.busy_s, "cpu_s": time.process_time() - self.cpu0, "pid": os.getpid()}


class ShardRunner:
    """A replica that runs whole shards (``whole_shards``): it reads a shard, runs every stage on each batch and
    writes it, in its own process, as an inline shard thread does, then commits the shard's parts.

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
        self.reader = build_component(load_plugins().readers, reader, "reader")
        self.batch_rows = batch_rows
        self.fail_on_damage = fail_on_damage
        self.stages = StageWorker(stages, key_state, outputs[1] is not None)
        self.writer = ShardWriter(outputs[0], outputs[1], None, targets)
        self.write_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mdf-write")

    def run(self, shard: Shard) -> ShardDone:
        """Read (one batch ahead, in a thread), process, and write in a thread of its own (at most two batches
        queued), so one replica overlaps decoding, the operators and encoding as an inline shard thread does."""
        reads: list[BatchRead] = []
        dones: list[BatchDone] = []
        queued: deque[Future[BatchDone]] = deque()
        offset = 0
        for index, batch in enumerate(prefetch(self._read(shard))):
            meta, kept, rejected = read_batch(shard, index, offset, batch)
            if self.fail_on_damage:  # stop before the shard is written, as the inline shard thread does
                note_damage(RunMetrics("ray"), meta.damaged, True)
            offset += batch.num_rows
            reads.append(meta)
            queued.append(
                self.write_pool.submit(self.writer.write, meta, self.stages.process(meta, (kept, rejected, [])))
            )
            while len(queued) > 2:
                dones.append(queued.popleft().result())
        dones += [f.result() for f in queued]
        return ShardDone(shard.id, reads, dones, self.writer.commit(shard.id, len(reads)))

    def _read(self, shard: Shard) -> Iterator[pa.RecordBatch]:
        """The reader's batches; an object store that fails for good names this node, as an upload does: here the
        worker hosts read the input, and one of them may be the node that cannot reach the store."""
        try:
            yield from self.reader.read(shard, self.batch_rows)
        except StorageError as exc:
            raise type(exc)(exc.url, f"{exc.message} (reading on the node at {node_address()})") from None

    def abort_all(self) -> None:
        self.writer.abort_all()

    def stats(self) -> dict[str, Any]:
        """A stage replica's stats, and the writer's under ``write_*``. One process does all three, so its CPU is
        split between the stages and the writing by their busy time (reading overlaps both, in its thread)."""
        out = self.stages.stats()
        busy, write = out["busy_s"], self.writer.busy_s
        share = busy / (busy + write) if busy + write > 0 else 1.0
        cpu = out["cpu_s"]
        return {
            **out,
            "cpu_s": cpu * share,
            "warmup_cpu_s": out["warmup_cpu_s"] * share,
            "write_busy_s": write,
            "write_cpu_s": cpu * (1 - share),
        }
