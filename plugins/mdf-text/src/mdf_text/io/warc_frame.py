"""The ``body`` column of a WARC batch, written into one Arrow buffer as records arrive (the FastWARC path's:
the kernel path builds its own in Rust)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

MAX_BATCH_BYTES = 256 << 20  # a batch's body column stays far below binary()'s 2 GiB offsets
FIRST_BODY_BYTES = 16 << 20  # the first batch's body buffer; it grows as needed


class BodyColumn:
    """The ``body`` column, written straight into one Arrow buffer per batch as records arrive.

    Each payload is copied once, into the batch's buffer, and its ``bytes`` object is freed at once, so the
    allocator hands the same warm memory to the next read. Keeping a batch's ``bytes`` objects alive and building
    the column with ``pa.array`` costs a second copy plus a batch's worth of fresh pages: measured 20-30 % of the
    reader's time on CommonCrawl records.

    The buffer starts at the previous batch's size plus a quarter (16 MiB for the first) and doubles when a
    batch outgrows it, up to 256 MiB a batch. Why not reserve 256 MiB and shrink: Arrow's allocator (mimalloc)
    shrinks in place only down to half a block, so shrinking a 256 MiB reservation to a 34 MiB batch copied
    the whole column again (~9 % of the reader's time on a plain CommonCrawl file).
    """

    def __init__(self, limit: int = MAX_BATCH_BYTES) -> None:
        self._next, self._max = FIRST_BODY_BYTES, limit
        self._reset()

    def _reset(self) -> None:
        self._buffer: Any = None
        self._view: memoryview | None = None
        self._capacity = self._limit = self._pos = 0
        self._ends = [0]

    def fits(self, size: int) -> bool:
        """Whether ``size`` more bytes fit the current batch (always, for the first body of a batch)."""
        return self._buffer is None or self._pos + size <= self._limit

    def append(self, body: bytes) -> None:
        end = self._pos + len(body)
        if self._view is None:
            self._limit = max(self._max, len(body))
            self._capacity = max(min(self._next, self._limit), len(body))
            self._buffer = pa.allocate_buffer(self._capacity, resizable=True)
            self._view = memoryview(self._buffer).cast("B")
        elif end > self._capacity:  # grow: a copy of what the batch holds, then room for as much again
            self._view.release()
            self._capacity = max(end, min(2 * self._capacity, self._limit))
            self._buffer.resize(self._capacity)
            self._view = memoryview(self._buffer).cast("B")
        self._view[self._pos : end] = body
        self._pos = end
        self._ends.append(end)

    def array(self, rows: int) -> pa.Array:
        """The column of the ``rows`` bodies appended since the last call; starts a new buffer."""
        if self._view is None:
            return pa.array([], pa.binary())
        self._view.release()
        self._buffer.resize(self._pos, shrink_to_fit=True)
        offsets = pa.array(self._ends, pa.int32()).buffers()[1]
        out = pa.Array.from_buffers(pa.binary(), rows, [None, offsets, self._buffer])
        self._next = max(FIRST_BODY_BYTES, self._pos + self._pos // 4)
        self._reset()
        return out
