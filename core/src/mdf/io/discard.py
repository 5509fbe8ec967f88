"""A writer that writes nothing: the output of the first pass of a cluster-mode dedup, which only collects
keys, and of dry runs. Counts stay exact; no file is created."""

from __future__ import annotations

from typing import ClassVar

import pyarrow as pa

from mdf.io.base import Writer


class DiscardWriter(Writer):
    """Drops every batch (rows are still counted by the executor)."""

    name: ClassVar[str] = "discard"

    def write(self, batch: pa.RecordBatch, shard_id: str) -> None:
        return None
