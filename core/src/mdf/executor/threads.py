"""Thread plumbing of the inline executor: read-ahead, a byte budget, and turns in input order.

The inline executor runs several shards at once in threads (Arrow releases the GIL in Parquet/JSONL decode,
zstd and compute kernels). Two things must stay what a sequential run gives:

* a shard's part file: each shard is read, processed and written in batch order by its own threads, so it
  holds the same rows in the same order whatever the other shards do;
* a streaming deduplicator's decisions: "the first row with a key is kept" means first in *input order*
  (shard by shard, batch by batch). :class:`Turnstile` lets batches through each deduplicator in exactly that
  order, one at a time, while everything before and after it (decode, filters, writing) runs in parallel.

:class:`ByteBudget` bounds the bytes of batches that wait to be written, so a slow writer holds back readers
instead of filling memory.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa


def prefetch(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Read one batch ahead in a thread so decoding overlaps with the operators."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mdf-read") as pool:
        future = pool.submit(next, batches, None)
        while True:
            batch = future.result()
            if batch is None:
                return
            future = pool.submit(next, batches, None)
            yield batch


def auto_bytes_in_flight() -> int:
    """1/8 of the machine's memory, between 256 MiB and 2 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return int(min(max(total // 8, 256 << 20), 2 << 30))


class Aborted(Exception):
    """Another thread of the run failed; this one stops waiting (the first error is the one reported)."""


class ByteBudget:
    """At most ``limit`` bytes held at once; one item larger than the limit passes when nothing else is held,
    so a big batch slows the run down instead of stopping it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self.peak = 0
        self._cond = threading.Condition()
        self._aborted = False
        self.cause: BaseException | None = None

    def acquire(self, nbytes: int) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._aborted or self.held == 0 or self.held + nbytes <= self.limit)
            if self._aborted:
                raise Aborted
            self.held += nbytes
            self.peak = max(self.peak, self.held)

    def release(self, nbytes: int) -> None:
        with self._cond:
            self.held -= nbytes
            self._cond.notify_all()

    def abort(self, cause: BaseException | None = None) -> None:
        """Wake every waiter with :class:`Aborted`; ``cause``, the first failure, is kept for them to report."""
        with self._cond:
            self._aborted = True
            self.cause = self.cause or cause
            self._cond.notify_all()


class Turnstile:
    """Gates that batches pass in input order: shard by shard (in ``shard_order``), batch by batch.

    A batch's position is ``(shard_index, batch_index)``. :meth:`turn` blocks until every earlier batch has
    passed the gate ``name``; a batch that never reaches a gate (emptied by an earlier filter) is waved
    through by :meth:`passed`. :meth:`end_shard` tells how many batches a shard has, so the turn can move to
    the next shard (also past shards with no batches at all).
    """

    def __init__(self, names: list[str], shard_order: list[int]) -> None:
        self._order = list(shard_order)
        self._rank = {s: i for i, s in enumerate(self._order)}
        self._at = {n: (0, 0) for n in names}  # per gate: (rank of the shard, batch) whose turn it is
        self._ends: dict[int, int] = {}  # rank -> batches of that shard
        self._cond = threading.Condition()
        self._aborted = False

    @property
    def names(self) -> list[str]:
        return list(self._at)

    def _now(self, name: str) -> tuple[int, int]:
        rank, batch = self._at[name]
        while self._ends.get(rank) == batch:
            rank, batch = rank + 1, 0
        self._at[name] = (rank, batch)
        return rank, batch

    def _wait(self, name: str, pos: tuple[int, int]) -> bool:
        """Wait for ``pos``'s turn at ``name``; False when ``pos`` already passed it."""
        self._cond.wait_for(lambda: self._aborted or self._now(name) >= pos)
        if self._aborted:
            raise Aborted
        return self._now(name) == pos

    def turn(self, name: str, shard_index: int, batch_index: int) -> _Turn:
        return _Turn(self, name, (self._rank[shard_index], batch_index))

    def passed(self, shard_index: int, batch_index: int) -> None:
        """Mark the batch as through every gate it did not enter (waiting for its turn at each)."""
        pos = (self._rank[shard_index], batch_index)
        with self._cond:
            for name in self._at:
                if self._wait(name, pos):
                    self._at[name] = (pos[0], pos[1] + 1)
            self._cond.notify_all()

    def end_shard(self, shard_index: int, batches: int) -> None:
        with self._cond:
            self._ends[self._rank[shard_index]] = batches
            self._cond.notify_all()

    def abort(self) -> None:
        with self._cond:
            self._aborted = True
            self._cond.notify_all()


class _Turn:
    """``with turnstile.turn(name, shard, batch):`` - the body runs when it is this batch's turn at ``name``."""

    def __init__(self, owner: Turnstile, name: str, pos: tuple[int, int]) -> None:
        self.owner, self.name, self.pos = owner, name, pos

    def __enter__(self) -> None:
        with self.owner._cond:
            if not self.owner._wait(self.name, self.pos):
                raise RuntimeError(f"batch {self.pos} entered gate {self.name!r} twice")

    def __exit__(self, *exc: object) -> None:
        with self.owner._cond:
            self.owner._at[self.name] = (self.pos[0], self.pos[1] + 1)
            self.owner._cond.notify_all()
