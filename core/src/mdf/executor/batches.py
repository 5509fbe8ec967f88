"""The typed messages of the shard loop and the read-side bookkeeping every executor shares.

A batch read from a shard becomes a :class:`BatchRead` (where it is in its shard, its rows and bytes, what the
reader rejected and which files were damaged) plus its kept rows and the reader's rejected piece; the end of a
shard is a :class:`ShardEnd`, the end of a loader's shards :class:`LoaderDone`. The inline executor makes them in
its shard threads, Ray's loaders in their actors (the driver then reads only the message, never the rows), and
:func:`count_read` adds one to the run's counters and to the shard's tally in one way for both: what was written
once per executor (split the reader's rejections, count their reasons, find the damage, add them up) is written
once. The result side is the same: a batch handed to the writer is a :class:`BatchDone`, counted by
:func:`count_done` (kept and rejected rows, the shard's tally, the report's timeline).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from mdf.damage import damaged_entries, note_damage
from mdf.io.base import Shard
from mdf.metrics import OperatorMetrics, RunMetrics, count_reasons
from mdf.operators import BatchContext, split_rejected
from mdf.run_stats import DamagedInput
from mdf.tally import ShardTally


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

    def counts(self) -> dict[str, Any]:
        """What the shard's tally adds up (:meth:`mdf.tally.ShardTally.read`)."""
        return {"rows": self.rows, "reader_reasons": self.reader_reasons, "damaged": self.damaged}


@dataclass
class BatchDone:
    """A batch's rows went to the writer: how many were kept and rejected (the reader's rejections included),
    how many of those the reader rejected, and operator counters: a batch's on Ray (its stage actors send them
    with each batch), none inline (a shard thread adds its shard's counters at the shard's end)."""

    shard: str
    rows_written: int
    rows_rejected: int
    by_reader: int
    operators: list[OperatorMetrics] = field(default_factory=list)


@dataclass
class ShardEnd:
    """A shard's last batch was sent: ``batches`` of them (the writer commits once it has written that many)."""

    shard: str
    batches: int


@dataclass
class ShardDone:
    """A whole shard read, processed, written and committed by one Ray replica (``whole_shards``): its batches'
    messages, for the same :func:`count_read` and :func:`count_done` calls, and the committed parts."""

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


def count_read(metrics: RunMetrics, tally: ShardTally, read: BatchRead, fail_on_damage: bool) -> None:
    """Add a batch read to the run's counters and its shard's tally; record (or, with ``fail``, raise on) damage."""
    metrics.rows_read += read.rows
    metrics.batches += 1
    for k, v in read.reader_reasons.items():
        metrics.reader_reasons[k] = metrics.reader_reasons.get(k, 0) + v
    tally.read(read.shard, read.counts())
    note_damage(metrics, read.damaged, fail_on_damage)


def count_done(metrics: RunMetrics, tally: ShardTally, done: BatchDone, so_far: Sequence[Sequence[Any]]) -> None:
    """Add a written batch to the run's counters, its shard's tally and the report's timeline (``so_far``: every
    operator's cumulative counters, per stage, for :meth:`mdf.metrics.RunMetrics.observe`)."""
    tally.add(done.shard, done.rows_written, done.rows_rejected, done.operators)
    metrics.rows_written += done.rows_written
    metrics.rows_rejected += done.rows_rejected
    metrics.observe(done.shard, done.rows_written, done.rows_rejected, done.by_reader, so_far)
