"""Reader and Writer base classes.

A reader lists *shards* (a file, or a piece of a big file) and streams record batches from one shard; a
writer writes the kept rows of a shard to one part file named after the shard, atomically on commit, so a
crashed or retried shard never leaves half a file behind and re-running a shard replaces its output.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa

from mdf.metrics import REASON
from mdf.operators import Component
from mdf.storage.redact import redact_text, redact_url

RESERVED = ("_reason", "_reason_detail", "_raw", "_shard")
"""Columns mdf itself writes beside rejected rows. An input column of one of these names (a ``rejected/`` output
read again) is renamed by :func:`rename_reserved`, so it is data, not mdf's own marker of a rejected row."""
PREVIOUS = "_prev"

DAMAGED_INPUT = "reader:damaged_input"
"""Reason of the one rejected row a reader yields where a file is damaged (truncated stream, bad frame)."""


@dataclass(frozen=True)
class Shard:
    """A unit of input owned by exactly one loader.

    :param id: stable name used for output part files (``cc-00001``, ``big-rg0004``).
    :param path: the file it comes from.
    :param start: first row group / byte offset of the piece (``None`` = whole file).
    :param stop: end (exclusive) of the piece.
    :param rows: row count when the format tells it without reading (Parquet footers), else ``None``.
    :param index: place in the reader's shard list (set by the executor's planning; orders rows by input).
    """

    id: str
    path: str
    size: int = 0
    start: int | None = None
    stop: int | None = None
    rows: int | None = None
    index: int = 0


def damaged_input_batch(shard: Shard, offset: int | None, message: str) -> pa.RecordBatch:
    """One rejected row that records damage in ``shard``'s file, so a damaged file is never silently short.

    A reader yields it (after the rows it could read before the damage) and stops reading that file. ``_raw``
    holds ``{"file", "offset", "error"}`` as JSON; ``offset`` is the byte offset in the (compressed) file where
    reading failed, ``None`` when the library does not say. A URL's credentials stay out of it.
    """
    entry = {"file": redact_url(shard.path), "offset": offset, "error": redact_text(message)}  # no credentials
    raw = json.dumps(entry, ensure_ascii=False)
    return pa.RecordBatch.from_arrays(
        [pa.array([raw], pa.string()), pa.array([DAMAGED_INPUT], pa.string()), pa.array([shard.id], pa.string())],
        names=["_raw", REASON, "_shard"],
    )


def reserved_rename(names: list[str]) -> dict[str, str]:
    """``{name: new name}`` for the :data:`RESERVED` names among ``names``: ``_reason`` -> ``_prev_reason``.

    A chain already there moves up by one (``_prev_reason`` -> ``_prev_prev_reason`` when ``_reason`` is
    present too: a ``rejected/`` output of a re-run read again), so the count of ``_prev`` says how many runs
    ago the value was written and no name is taken twice."""
    taken = set(names)
    out = {}
    for name in RESERVED:
        chain = name
        while chain in taken:
            out[chain] = PREVIOUS + chain
            chain = PREVIOUS + chain
    return out


def rename_reserved(data: pa.RecordBatch | pa.Table | pa.Schema) -> Any:
    """``data`` with its :data:`RESERVED` columns renamed (:func:`reserved_rename`); as it is when it has none.

    Readers call it on what they read from the input, before they add their own ``_reason`` to rejected rows."""
    names = list(data.names if isinstance(data, pa.Schema) else data.schema.names)
    renames = reserved_rename(names)
    if not renames:
        return data
    new = [renames.get(n, n) for n in names]
    if isinstance(data, pa.Schema):
        return pa.schema([f.with_name(n) for f, n in zip(data, new, strict=True)], metadata=data.metadata)
    if isinstance(data, pa.Table):
        return data.rename_columns(new)
    return pa.RecordBatch.from_arrays(data.columns, names=new)  # RecordBatch.rename_columns: pyarrow >= 16


class Reader(Component):
    """Lists shards and streams batches of at most ``batch_rows`` rows from one of them.

    Rows that cannot be decoded are yielded too, in batches carrying a non-null ``_reason`` column (and the raw
    record in ``_raw`` where there is one), so the executor can route them to the rejected output.
    """

    kind: ClassVar[str] = "reader"
    modality: ClassVar[str | None] = None
    """What its batches hold: the name of a registered :class:`mdf.Modality` (``text`` for JSONL or WARC,
    ``image`` for an image folder), which the batch-size planner sizes batches for. ``None``: the format cannot
    say (a Parquet file holds anything); the data is then planned as text unless an operator declares media.
    A reader whose answer depends on its parameters overrides :meth:`output_modality`."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.modality is not None and (not isinstance(cls.modality, str) or not cls.modality.isidentifier()):
            raise TypeError(f"{cls.__name__}.modality = {cls.modality!r}; name a registered modality or None")

    def output_modality(self) -> str | None:
        """The modality of this reader's batches (``None``: not declared); the class's :attr:`modality` unless
        a parameter says more (the Parquet reader's ``modality``)."""
        return self.modality

    @abstractmethod
    def shards(self) -> list[Shard]:
        """Return every shard of the input, in a stable order. Raise before any work if input is missing."""

    @abstractmethod
    def read(self, shard: Shard, batch_rows: int) -> Iterator[pa.RecordBatch]:
        """Yield the shard's records in file order as batches of at most ``batch_rows`` rows.

        Damage (a stream cut short, a page that fails to decode) is not an exception: yield the rows read
        before it, then :func:`damaged_input_batch`, and stop reading the shard."""

    def schema(self, shards: list[Shard]) -> pa.Schema | None:
        """The schema the batches will have, read cheaply (footers, a sample), so operators' declared columns
        are checked before any work; ``None`` when the reader cannot tell (the check is then skipped)."""
        return None


class Writer(Component, ABC):
    """Writes batches of one shard into a part file that appears only on :meth:`commit`."""

    kind: ClassVar[str] = "writer"

    @abstractmethod
    def write(self, batch: pa.RecordBatch, shard_id: str) -> None:
        """Append ``batch`` to the (temporary) part file of ``shard_id``."""

    def commit(self, shard_id: str) -> list[str]:
        """Make the shard's part file(s) visible atomically; return their paths."""
        return []

    def abort(self, shard_id: str) -> None:
        """Drop whatever was written for ``shard_id`` (the shard will be redone)."""

    def close(self) -> None:
        """Release resources at the end of the run."""
