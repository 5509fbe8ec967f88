"""Atomic part files shared by the file writers.

Each shard writes to ``<name>.tmp`` files that are renamed into place on :meth:`commit`, so readers of the
output never see half a file and a redone shard replaces its output instead of adding to it. When a batch
arrives whose schema cannot be cast to the open file's (a refiner added columns to rejected rows, a JSONL
block inferred a new field), the shard continues in a new piece ``<shard>.1.parquet`` rather than dropping
columns: nothing is lost, and a dataset reader unifies the pieces.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa

from mdf.io import rejected
from mdf.io.base import Writer


@dataclass
class _Piece:
    final: str
    tmp: str
    schema: pa.Schema
    handle: Any


@dataclass
class _ShardOut:
    pieces: list[_Piece] = field(default_factory=list)
    empty_schema: pa.Schema | None = None  # of a row-less batch, for a shard that keeps no row at all


class PartFiles(Writer):
    """Writer base: per-shard temp files, schema pieces, rename on commit. Subclasses do the format."""

    suffix: ClassVar[str] = ""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._open_shards: dict[str, _ShardOut] = {}
        os.makedirs(self.params.path, exist_ok=True)
        # a rejected: folder has one schema, fixed by the run before any data (mdf.io.rejected)
        self._schema = rejected.load(self.params.path)

    @abstractmethod
    def _open(self, tmp_path: str, schema: pa.Schema) -> Any: ...

    @abstractmethod
    def _write(self, handle: Any, batch: pa.RecordBatch) -> None: ...

    @abstractmethod
    def _close(self, handle: Any) -> None: ...

    @classmethod
    def part_suffix(cls, params: Any) -> str:
        """What every part file written with ``params`` ends with (after ``<shard>`` or ``<shard>.<piece>``): a
        later ``--overwrite`` tells the files an unfinished run left from a user's by it (:mod:`mdf.replace`)."""
        return cls.suffix

    def part_path(self, shard_id: str, piece: int = 0) -> str:
        name = shard_id if piece == 0 else f"{shard_id}.{piece}"
        return os.path.join(self.params.path, name + self.part_suffix(self.params))

    def write(self, batch: pa.RecordBatch, shard_id: str) -> None:
        drop = getattr(self.params, "drop_columns", None)
        if drop:  # columns a later reader never needs (raw HTML beside its extracted text): not written at all
            batch = batch.select([i for i, name in enumerate(batch.schema.names) if name not in drop])
        if self._schema is not None:
            batch = rejected.conform(batch, self._schema, shard_id)
        out = self._open_shards.setdefault(shard_id, _ShardOut())
        if batch.num_rows == 0:  # e.g. what is left of a batch of reader rejections: no rows, other columns
            if out.empty_schema is None or "_raw" in out.empty_schema.names:
                out.empty_schema = batch.schema
            return
        piece = out.pieces[-1] if out.pieces else None
        if piece is not None and not batch.schema.equals(piece.schema):
            cast = _conform(batch, piece.schema)
            if cast is None:
                piece = None  # schema cannot be cast: continue in a new piece
            else:
                batch = cast
        if piece is None:
            piece = self._new_piece(shard_id, len(out.pieces), batch.schema)
            out.pieces.append(piece)
        self._write(piece.handle, batch)

    def _new_piece(self, shard_id: str, index: int, schema: pa.Schema) -> _Piece:
        final = self.part_path(shard_id, index)
        tmp = final + ".tmp"
        return _Piece(final, tmp, schema, self._open(tmp, schema))

    def commit(self, shard_id: str) -> list[str]:
        out = self._open_shards.pop(shard_id, None)
        if out is None:
            return []
        if not out.pieces and out.empty_schema is not None:  # nothing kept: an empty part file, as before
            out.pieces.append(self._new_piece(shard_id, 0, out.empty_schema))
        for piece in out.pieces:
            self._close(piece.handle)
            os.replace(piece.tmp, piece.final)
        return [p.final for p in out.pieces]

    def abort(self, shard_id: str) -> None:
        out = self._open_shards.pop(shard_id, None)
        for piece in out.pieces if out else []:
            self._close(piece.handle)
            if os.path.exists(piece.tmp):
                os.remove(piece.tmp)

    def close(self) -> None:
        for shard_id in list(self._open_shards):
            self.abort(shard_id)


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch | None:
    """Cast ``batch`` to ``schema`` when it has the same column names (e.g. null -> string), else ``None``."""
    if batch.schema.names != schema.names:
        return None
    try:
        return batch.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
