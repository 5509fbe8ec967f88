"""The shard loop's typed messages, its read step, and the driver's side of its bookkeeping, shared by every
executor.

A batch read from a shard becomes a :class:`BatchRead` (where it is in its shard, its rows and bytes, what the
reader rejected and which files were damaged) plus its kept rows and the reader's rejected piece
(:func:`shard_batches`, which also holds the one offset rule); the end of a shard is a :class:`ShardEnd`, the end
of a loader's shards :class:`LoaderDone`. A batch handed to the writer is a :class:`BatchDone` (rows kept and
rejected, and that batch's operator counters). The inline executor makes them in its shard threads, Ray's actors
in theirs (the driver then reads only the messages, never the rows), and :class:`PassCounter` adds them to the
run's metrics, the shards' tally and the checkpoint in one way for all (:class:`mdf.tally.Counts`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from mdf.damage import damaged_entries, refuse_damage
from mdf.io.base import Reader, Shard
from mdf.metrics import OperatorMetrics, RunMetrics, StageMetrics, count_reasons
from mdf.operators import BatchContext, split_rejected
from mdf.recipe import StageSpec
from mdf.run_stats import DamagedInput
from mdf.state import Checkpoint
from mdf.tally import Counts, ShardTally


@dataclass
class BatchRead:
    """A batch as read: its place in its shard, its rows (the reader's rejections included) and bytes, the
    reader's reject reasons and the damaged files among them."""

    shard: str
    index: int
    offset: int
    shard_index: int
    rows: int
    nbytes: int
    reader_reasons: dict[str, int] = field(default_factory=dict)
    damaged: list[DamagedInput] = field(default_factory=list)

    def context(self) -> BatchContext:
        return BatchContext(self.shard, self.index, self.offset, self.shard_index)

    @property
    def by_reader(self) -> int:
        """Rows the reader rejected (each is counted under one reason)."""
        return sum(self.reader_reasons.values())

    def counts(self) -> Counts:
        return Counts(rows_read=self.rows, batches=1, reader_reasons=dict(self.reader_reasons),
                      damaged=list(self.damaged))  # fmt: skip


@dataclass
class BatchDone:
    """A batch's rows went to the writer: how many were kept and rejected (the reader's rejections included),
    how many of those the reader rejected, and the operators' counters of this batch (recipe order)."""

    shard: str
    rows_written: int
    rows_rejected: int
    by_reader: int
    operators: list[OperatorMetrics] = field(default_factory=list)

    @classmethod
    def of(cls, read: BatchRead, kept: pa.RecordBatch, rejected: list[pa.RecordBatch],
           operators: list[OperatorMetrics]) -> BatchDone:  # fmt: skip
        return cls(read.shard, kept.num_rows, sum(r.num_rows for r in rejected), read.by_reader, operators)

    def counts(self) -> Counts:
        return Counts(rows_written=self.rows_written, rows_rejected=self.rows_rejected, operators=self.operators)


@dataclass
class ShardEnd:
    """A shard's last batch was sent: ``batches`` of them (the writer commits once it has written that many)."""

    shard: str
    batches: int


@dataclass
class ShardDone:
    """A whole shard read, processed, written and committed by one Ray replica (``whole_shards``): its batches'
    messages, for the same :class:`PassCounter`, and the committed parts."""

    shard: str
    reads: list[BatchRead]
    dones: list[BatchDone]
    files: list[str]


@dataclass
class LoaderDone:
    """A loader has no shards left."""


def read_batch(
    shard: Shard, index: int, offset: int, batch: pa.RecordBatch
) -> tuple[BatchRead, pa.RecordBatch, list[pa.RecordBatch]]:
    """Split a batch as the reader gave it into ``(message, rows for the operators, the reader's rejections)``."""
    kept, rej = split_rejected(batch)
    reasons: dict[str, int] = {}
    if rej is not None:
        count_reasons(rej, reasons)
    read = BatchRead(shard.id, index, offset, shard.index, batch.num_rows, batch.nbytes, reasons, damaged_entries(rej))
    return read, kept, [rej] if rej is not None else []


def shard_batches(
    reader: Reader, shard: Shard, batch_rows: int, fail_on_damage: bool = False
) -> Iterator[tuple[BatchRead, pa.RecordBatch, list[pa.RecordBatch]]]:
    """A shard's batches as :func:`read_batch` splits them, with their offsets; with ``fail_on_damage``
    (``on_damaged_input: fail``) the first damaged file stops the run before its batch goes further.

    The offset rule, the one every executor follows: a batch's ``row_offset`` counts the rows the reader *kept*
    in the shard's earlier batches, so a row's position (``shard_index << 40 | row``, which deduplicators
    claim keys with and ``cluster_column`` holds) is its place among the rows the operators receive from the
    shard. It does not depend on how the shard was cut into batches."""
    offset = 0
    for index, batch in enumerate(reader.read(shard, batch_rows)):
        read, kept, rejected = read_batch(shard, index, offset, batch)
        if fail_on_damage:
            refuse_damage(read.damaged)
        offset += kept.num_rows
        yield read, kept, rejected


class PassCounter:
    """The driver's side of a pass's bookkeeping: batches read and done into the run's metrics, the report's
    timeline and the shards' tally; the operators' counters added up by position; a committed shard into the
    checkpoint. Every executor counts through it, so the figures mean the same whichever ran."""

    def __init__(self, metrics: RunMetrics, stages: list[StageSpec]) -> None:
        self.metrics = metrics
        self.stages = stages
        self.tally = ShardTally()
        self.operators: list[OperatorMetrics | None] = [None] * sum(len(s.operators) for s in stages)

    def read(self, read: BatchRead) -> None:
        """A batch read: rows, batches, reasons and damaged files (per shard too)."""
        counts = read.counts()
        counts.add_to(self.metrics)
        self.tally.add(read.shard, counts)

    def done(self, done: BatchDone) -> None:
        """A batch written: its operators' counters into the totals, its rows into the metrics, its shard's tally
        and the report's timeline."""
        for k, m in enumerate(done.operators):
            total = self.operators[k]
            if total is None:
                self.operators[k] = total = OperatorMetrics(m.name, m.kind)
            total.merge(m)
        counts = done.counts()
        counts.add_to(self.metrics)
        self.tally.add(done.shard, counts)
        so_far = [s.operators for s in self.stage_metrics()]
        self.metrics.observe(done.shard, done.rows_written, done.rows_rejected, done.by_reader, so_far)

    def committed(self, shard: str, checkpoint: Checkpoint | None) -> None:
        """A shard's parts are committed: its counts join the committed ones, and the checkpoint."""
        committed = self.tally.commit(shard)
        if checkpoint is not None:
            checkpoint.shard_done(shard, committed)

    def count(self, read: BatchRead, done: BatchDone) -> None:
        """A batch read and written, as a :class:`~mdf.executor.shard.ShardRunner` reports it (``on_batch``)."""
        self.read(read)
        self.done(done)

    def stage_metrics(self) -> list[StageMetrics]:
        """The operators' totals per stage (named from the recipe where no batch reached them)."""
        out, k = [], 0
        for spec in self.stages:
            ops = []
            for op in spec.operators:
                ops.append(self.operators[k] or OperatorMetrics(op.name, "?"))
                k += 1
            out.append(StageMetrics(spec.name, ops))
        return out

    def finish(self, wall_s: float) -> RunMetrics:
        self.metrics.wall_s = wall_s
        self.metrics.stages = self.stage_metrics()
        return self.metrics
