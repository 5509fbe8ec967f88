"""Parquet reader (streamed by row group) and writer (zstd, atomic part files).

The reader reads only footers while listing shards, so a missing column or a corrupt file is reported before
any work, naming the file. Big files can be cut into row-group ranges (``row_groups_per_shard``) so one 10 GB
file still feeds several loaders.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import Field

from mdf.errors import InputError, RecipeError
from mdf.io.base import Reader, Shard, damaged_input_batch, rename_reserved
from mdf.io.files import PartFiles
from mdf.io.sharding import expand_paths, file_size, shard_ids
from mdf.operators import Params
from mdf.storage.urls import is_remote

_UNREADABLE = (FileNotFoundError, PermissionError, IsADirectoryError)  # the machine's problem, not the file's
EXTENSIONS = (".parquet", ".parq", ".pq")
_REMOTE_BUFFER = 8 << 20


class ParquetReader(Reader):
    """Reads Parquet files (globs, folders), streaming row groups; optional column projection.

    A file whose footer or a page fails to decode yields the rows before the damage and one
    ``reader:damaged_input`` row (file, byte offset, Arrow's message) instead of failing the run."""

    name = "parquet"

    class Params(Params):
        paths: list[str] = Field(min_length=1, description="files, folders or globs ('**' allowed)")
        columns: list[str] | None = Field(None, description="columns to read (default: all)")
        row_groups_per_shard: int = Field(0, ge=0, description="cut files into shards of N row groups (0 = file)")
        modality: str | None = Field(
            None,
            description="what the columns hold, for batch sizing (mdf plan): image for a Parquet of encoded images;"
            " none = plain columns unless an operator declares media",
        )

    def output_modality(self) -> str | None:
        """The ``modality`` parameter: a Parquet file does not say whether its binary column is JPEG or not."""
        return self.params.modality

    def shards(self) -> list[Shard]:
        files = expand_paths(self.params.paths, extensions=EXTENSIONS)
        out: list[Shard] = []
        for path, sid in zip(files, shard_ids(files), strict=True):
            meta = self._metadata(path)
            if meta is None:  # damaged footer: read() yields its one damaged-input row
                out.append(Shard(sid, path, file_size(path), rows=1))
                continue
            n = self.params.row_groups_per_shard
            if n and meta.num_row_groups > n:
                for start in range(0, meta.num_row_groups, n):
                    stop = min(start + n, meta.num_row_groups)
                    rows = sum(meta.row_group(g).num_rows for g in range(start, stop))
                    out.append(Shard(f"{sid}-rg{start:05d}", path, file_size(path), start, stop, rows))
            else:
                out.append(Shard(sid, path, file_size(path), rows=meta.num_rows))
        return out

    def _metadata(self, path: str) -> pq.FileMetaData | None:
        try:
            with _opened(path) as source:
                meta = pq.read_metadata(source)
        except _UNREADABLE as exc:
            raise InputError(f"cannot read Parquet file {path}: {exc}") from exc
        except (OSError, pa.ArrowException):
            return None
        readable_columns(path, meta.schema.to_arrow_schema(), self.params.columns)
        if self.params.columns:
            names = set(meta.schema.to_arrow_schema().names)
            missing = [c for c in self.params.columns if c not in names]
            if missing:
                raise RecipeError(
                    f"column(s) {missing} not in {path} (it has {sorted(names)}); fix the column list",
                    "reader.columns",
                )
        return meta

    def schema(self, shards: list[Shard]) -> pa.Schema | None:
        """The first readable file's schema (its footer), projected to ``columns``: for column checks."""
        for shard in shards[:8]:
            try:
                with _opened(shard.path) as source:
                    schema = pq.read_schema(source)
            except (OSError, pa.ArrowException):
                continue
            cols = self.params.columns
            return rename_reserved(pa.schema([schema.field(c) for c in cols]) if cols else schema)
        return None

    def read(self, shard: Shard, batch_rows: int) -> Iterator[pa.RecordBatch]:
        if is_remote(shard.path):  # the next column chunks fetched while this one decodes (mdf.io.ranges_ahead)
            from mdf.io.ranges_ahead import open_remote

            source, ahead = open_remote(shard.path, shard.size or file_size(shard.path))
            with source:
                yield from self._read(shard, source, batch_rows, ahead)
            return
        with _opened(shard.path, shard.size) as source:
            yield from self._read(shard, source, batch_rows)

    def _read(self, shard: Shard, source: Any, batch_rows: int, ahead: Any = None) -> Iterator[pa.RecordBatch]:
        try:
            # pre_buffer=False: Arrow's read-ahead coalesces up to 32 MB per file, memory that batch_rows (and
            # the batch-size planner) cannot see; on local disks it buys nothing measurable. A remote file is read
            # in 8 MiB pieces (one ranged GET each) instead of 1 MiB: a request costs far more than a disk read
            buffer = _REMOTE_BUFFER if is_remote(shard.path) else 1 << 20
            pf = pq.ParquetFile(source, pre_buffer=False, buffer_size=buffer)
        except _UNREADABLE as exc:
            raise InputError(f"cannot read Parquet file {shard.path}: {exc}") from exc
        except (OSError, pa.ArrowException) as exc:
            yield damaged_input_batch(shard, max(shard.size - 8, 0), f"parquet footer: {exc}")
            return
        meta = pf.metadata
        groups = range(meta.num_row_groups) if shard.start is None else range(shard.start, shard.stop or shard.start)
        if ahead is not None:
            ahead.plan(_chunk_ranges(meta, groups, self.params.columns or None))
        # All the shard's row groups in one read, so a batch spans groups: files written in small groups
        # (DataTrove writes a group per 1,000 rows; the tests' W1 data has 500) gave batches that small, and
        # each batch costs every operator call, a key-state claim (a remote call on Ray) and a write. Damage is
        # still located by group: see _by_group.
        given = 0
        try:
            for batch in pf.iter_batches(batch_size=batch_rows, row_groups=list(groups), columns=self.params.columns):
                given += batch.num_rows
                yield rename_reserved(batch)  # a column named _reason is data here, not a rejection
        except _UNREADABLE as exc:
            raise InputError(f"cannot read Parquet file {shard.path}: {exc}") from exc
        except (OSError, pa.ArrowException):
            yield from self._by_group(pf, shard, groups, given, batch_rows)

    def _by_group(
        self, pf: pq.ParquetFile, shard: Shard, groups: range, given: int, batch_rows: int
    ) -> Iterator[pa.RecordBatch]:
        """After a read error: the groups again, one at a time, past the ``given`` rows already yielded. The
        damaged group is reported at its own offset and every row before it kept, as when the reader read one
        group at a time (a group that reads the second time is yielded and the read goes on)."""
        meta = pf.metadata
        for g in groups:
            rows = meta.row_group(g).num_rows
            if given >= rows:
                given -= rows
                continue
            try:
                for batch in pf.iter_batches(batch_size=batch_rows, row_groups=[g], columns=self.params.columns):
                    if given >= batch.num_rows:
                        given -= batch.num_rows
                        continue
                    yield rename_reserved(batch.slice(given))
                    given = 0
            except _UNREADABLE as exc:
                raise InputError(f"cannot read Parquet file {shard.path}: {exc}") from exc
            except (OSError, pa.ArrowException) as exc:
                yield damaged_input_batch(shard, _group_offset(meta, g), f"parquet row group {g}: {exc}")
                return


_VIEWS = tuple(
    getattr(pa.types, name) for name in ("is_string_view", "is_binary_view", "is_list_view", "is_large_list_view")
    if hasattr(pa.types, name)
)  # fmt: skip


def readable_columns(path: str, schema: pa.Schema, columns: list[str] | None) -> None:
    """Exit 2 before any work when a column read (``columns``, default all) cannot be read by name or by the
    operators: two columns of one name (a batch's column is asked for by name: ``KeyError`` at the first batch),
    or a view type (``string_view``, ...: Arrow's filter and take have no kernel for them here, so every
    operator failed at its first batch). Both come from the file's footer, read while listing shards."""
    names = schema.names
    read = columns or names
    twice = next((n for n in read if names.count(n) > 1), None)
    if twice is not None:
        raise RecipeError(
            f"{path} has {names.count(twice)} columns named {twice!r}; mdf reads a column by its name: rename them in "
            "the file, or read the others with reader.columns",
            "reader.paths",
        )
    view = next((f for f in schema if f.name in read and any(is_view(f.type) for is_view in _VIEWS)), None)
    if view is not None:
        raise RecipeError(
            f"column {view.name!r} of {path} is {view.type}, a view type mdf's operators do not read (Arrow's filter "
            "and take have no kernel for it); write the file with plain string/binary/list columns, or leave the "
            "column out with reader.columns",
            "reader.paths",
        )


@contextlib.contextmanager
def _opened(path: str, size: int | None = None) -> Iterator[Any]:
    """``path`` itself, or an open Python file where the name is not UTF-8 (``os.fsdecode`` gave it surrogates,
    which Arrow cannot encode: the run used to end with "unexpected UnicodeEncodeError"). A URL is opened by the
    storage layer for random access: the footer, then each row group's byte range, one ranged GET each."""
    if is_remote(path):
        from mdf.storage import default  # the S3 layer, imported for URLs only

        with default().open_random(path, size or file_size(path)) as f:
            yield f
        return
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        with open(path, "rb") as f:
            yield f
        return
    yield path


def _chunk_ranges(meta: pq.FileMetaData, groups: range, columns: list[str] | None) -> list[tuple[int, int]]:
    """The ``(offset, length)`` of each column chunk the read will ask for: ``groups``' chunks of ``columns``
    (all where None), as Arrow computes them (the dictionary page first where there is one)."""
    out = []
    for g in groups:
        rg = meta.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            if columns is not None and col.path_in_schema.split(".")[0] not in columns:
                continue
            start = col.data_page_offset
            if col.has_dictionary_page and 0 < (col.dictionary_page_offset or 0) < start:
                start = col.dictionary_page_offset
            out.append((start, col.total_compressed_size))
    return out


def _group_offset(meta: pq.FileMetaData, group: int) -> int | None:
    """Byte offset where row group ``group``'s first page starts."""
    rg = meta.row_group(group)
    offsets = []
    for c in range(rg.num_columns):
        col = rg.column(c)
        offsets.append(col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset)
    return min(offsets) if offsets else None


class ParquetWriter(PartFiles):
    """Writes one zstd Parquet part file per input shard, atomically (temp file + rename on commit).

    A part file is opened on its first batch, which decides the columns to dictionary-encode
    (:func:`dictionary_columns`): Arrow tries a dictionary for every column and falls back to plain encoding once
    the dictionary passes 1 MB, so a column of distinct values (ids, URLs, texts) paid the dictionary's hashing,
    a compressed dictionary page and the fall-back in every row group. Polars, DuckDB and Spark choose by
    cardinality too."""

    name = "parquet"
    suffix = ".parquet"

    class Params(Params):
        path: str = Field(description="output folder")
        compression: str = Field("zstd", description="parquet codec: zstd, snappy, gzip, lz4, none")
        compression_level: int | None = Field(None, description="codec level (default: the codec's own)")
        row_group_rows: int = Field(128 * 1024, gt=0, description="max rows per row group")
        drop_columns: list[str] = Field(
            default_factory=list, description="columns not written (e.g. the raw HTML once text is extracted)"
        )

    def _open(self, tmp_path: str, schema: pa.Schema) -> _Part:
        return _Part(tmp_path, schema)

    def _writer(self, part: _Part, batch: pa.RecordBatch | None) -> pq.ParquetWriter:
        if part.writer is None:
            part.writer = pq.ParquetWriter(
                part.path,
                part.schema,
                compression=self.params.compression,
                compression_level=self.params.compression_level,
                use_dictionary=True if batch is None else dictionary_columns(batch),
            )
        return part.writer

    def _write(self, handle: _Part, batch: pa.RecordBatch) -> None:
        self._writer(handle, batch).write_batch(batch, row_group_size=self.params.row_group_rows)

    def _close(self, handle: _Part) -> None:
        self._writer(handle, None).close()  # a part that got no batch is still a (row-less) file


class _Part:
    """A part file's path and schema; its Arrow writer is made on the first batch (or at the close)."""

    __slots__ = ("path", "schema", "writer")

    def __init__(self, path: str, schema: pa.Schema) -> None:
        self.path, self.schema = path, schema
        self.writer: pq.ParquetWriter | None = None


SAMPLE_ROWS = 1024  # values looked at per column to judge its cardinality
MIN_SAMPLE = 64  # fewer rows say too little: keep Arrow's default (a dictionary for every column)


def dictionary_columns(batch: pa.RecordBatch) -> bool | list[str]:
    """The columns of ``batch`` worth a dictionary: those whose first :data:`SAMPLE_ROWS` values repeat (at most
    half of them distinct). ``True`` (Arrow's default, every column) for a nested schema, whose leaf columns
    Arrow names by path, or a batch too short to judge."""
    if batch.num_rows < MIN_SAMPLE or any(pa.types.is_nested(f.type) for f in batch.schema):
        return True
    head = batch.slice(0, SAMPLE_ROWS)
    return [
        field.name
        for field, column in zip(head.schema, head.columns, strict=True)
        # a dictionary-typed column is already encoded: it is written as it is
        if pa.types.is_dictionary(field.type) or pc.count_distinct(column, mode="all").as_py() * 2 <= len(column)
    ]
