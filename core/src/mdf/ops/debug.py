"""Operators for measuring and testing the engine itself, not the data.

``noop_refiner`` returns its batch untouched: a chain of them measures pure executor overhead.
``delay_refiner`` sleeps per batch and per row: a stand-in for a slow model stage when testing
backpressure, replica scaling and fault tolerance, without a model.
"""

from __future__ import annotations

import time

import pyarrow as pa
from pydantic import Field

from mdf.operators import Params, Refiner


class NoopRefiner(Refiner):
    """Return the batch unchanged (measures executor overhead)."""

    name = "noop_refiner"
    writes = {}  # adds no column

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        return batch


class DelayRefiner(Refiner):
    """Sleep seconds_per_batch + seconds_per_row x rows, then return the batch (simulates a slow stage)."""

    name = "delay_refiner"
    writes = {}  # adds no column

    class Params(Params):
        seconds_per_batch: float = Field(0.0, ge=0, description="sleep per batch")
        seconds_per_row: float = Field(0.0, ge=0, description="extra sleep per row")

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        time.sleep(self.params.seconds_per_batch + self.params.seconds_per_row * batch.num_rows)
        return batch
