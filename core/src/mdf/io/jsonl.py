"""JSON Lines reader (plain, .gz, .zst; streamed) and writer.

Blocks of whole lines are parsed by Arrow's multi-threaded JSON reader. Only when a block fails (a line that
is not JSON, invalid UTF-8, a value of the wrong type) is that one block re-parsed line by line, so good
lines are kept and each bad line goes to the rejected output with its reason and raw text; clean input never
pays for the slow path.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from functools import lru_cache
from typing import IO, Any

import pyarrow as pa
import pyarrow.json as pajson
from pydantic import Field, field_validator

from mdf.arrowpy import lit
from mdf.errors import InputError
from mdf.io.base import Reader, Shard, damaged_input_batch, rename_reserved
from mdf.io.files import PartFiles
from mdf.io.jsonl_schema import extend, infer_schema, parse_type
from mdf.io.jsonl_values import BAD_VALUE, bad_value, beyond_int64, deep_detail, split_deep
from mdf.io.sharding import expand_paths, file_info, file_size, shard_ids
from mdf.io.streams import COMPRESSED, DamagedStream, open_stream, sample_lines
from mdf.metrics import REASON, REASON_DETAIL
from mdf.operators import Params

EXTENSIONS = (".jsonl", ".ndjson", ".json", *(f"{e}{c}" for e in (".jsonl", ".ndjson", ".json") for c in COMPRESSED))


class JsonlReader(Reader):
    """Reads JSON Lines (.jsonl, .jsonl.gz, .jsonl.zst); bad lines go to rejected with their reason.

    Column types come from ``columns`` when it gives them, else from a sample of lines across each file; a
    record that does not fit them is rejected alone. A compressed file cut short or holding a bad frame yields
    the rows before the damage and one ``reader:damaged_input`` row naming the file and the byte offset."""

    name = "jsonl"
    modality = "text"

    class Params(Params):
        paths: list[str] = Field(min_length=1, description="files, folders (their JSONL files) or globs")
        columns: list[str] | dict[str, str] | None = Field(
            None, description="fields to keep (missing ones read as null), or {field: type} to also fix types"
        )
        block_bytes: int = Field(8 << 20, ge=1 << 16, description="bytes parsed at once")
        bytes_per_shard: int = Field(0, ge=0, description="cut uncompressed files into byte ranges (0 = file)")

        @field_validator("columns")
        @classmethod
        def _types(cls, value: Any) -> Any:
            if isinstance(value, dict):
                for name, type_name in value.items():
                    try:
                        parse_type(str(type_name))
                    except ValueError as exc:
                        raise ValueError(f"column {name!r}: {exc}") from None
            return value

    def shards(self) -> list[Shard]:
        files = expand_paths(self.params.paths, extensions=EXTENSIONS)
        out: list[Shard] = []
        step = self.params.bytes_per_shard
        for path, sid in zip(files, shard_ids(files), strict=True):
            size = file_size(path)
            if step and size > step and not path.endswith(COMPRESSED):
                for i, start in enumerate(range(0, size, step)):
                    out.append(Shard(f"{sid}-b{i:05d}", path, size, start, min(start + step, size)))
            else:
                out.append(Shard(sid, path, size))
        return out

    def schema(self, shards: list[Shard]) -> pa.Schema | None:
        """The schema batches will have, as far as a sample of the first file with records tells (empty or
        unreadable files say nothing); ``None`` when no file among the first few has a record."""
        schema = None
        for path in list(dict.fromkeys(s.path for s in shards))[:8]:
            sampled = self.file_schema(path)
            if len(sampled):
                schema = sampled
                break
        cols = self.params.columns
        if cols:
            schema = pa.schema([pa.field(c, self._type_of(c, schema or pa.schema([]))) for c in cols])
        return None if schema is None else rename_reserved(schema)

    def file_schema(self, path: str) -> pa.Schema:
        """Types every block of ``path`` is parsed against: ``columns``' types, else a sample's majority types."""
        try:
            sampled = _sampled_schema(path, file_info(path)[1] or 0)
        except OSError as exc:
            raise InputError(f"cannot read JSONL file {path}: {exc}") from exc
        cols = self.params.columns
        if isinstance(cols, dict):
            given = {c: parse_type(str(t)) for c, t in cols.items()}
            return pa.schema([*given.items(), *[f for f in sampled if f.name not in given]])
        return sampled

    def _type_of(self, column: str, schema: pa.Schema) -> pa.DataType:
        i = schema.get_field_index(column)
        return schema.field(i).type if i >= 0 else pa.null()

    def read(self, shard: Shard, batch_rows: int) -> Iterator[pa.RecordBatch]:
        schema = self.file_schema(shard.path)
        cols = self.params.columns
        keep = list(cols) if cols else None
        try:
            for block in _line_blocks(shard, self.params.block_bytes):
                table, rejected = _parse_block(block, schema, shard, keep)
                if table is not None and table.num_rows:
                    schema = extend(schema, table.schema)  # later blocks type new fields the same way
                    table = rename_reserved(self._project(table, schema))  # a key "_reason" is data
                    yield from table.to_batches(max_chunksize=batch_rows)
                if rejected is not None:
                    yield rejected
        except DamagedStream as exc:
            yield damaged_input_batch(shard, exc.offset, exc.message)
        except OSError as exc:
            raise InputError(f"cannot read JSONL file {shard.path}: {exc}") from exc

    def _project(self, table: pa.Table, schema: pa.Schema) -> pa.Table:
        cols = self.params.columns
        if not cols:
            return table
        arrays = []
        for c in cols:
            if c in table.column_names:
                arrays.append(table.column(c))
            else:
                t = self._type_of(c, schema)
                arrays.append(pa.nulls(table.num_rows, pa.string() if pa.types.is_null(t) else t))
        return pa.Table.from_arrays(arrays, names=list(cols))


@lru_cache(maxsize=64)
def _sampled_schema(path: str, mtime: float) -> pa.Schema:
    """One sample per file (and version of it), shared by every byte-range shard of the file."""
    return infer_schema(sample_lines(path))


def _line_blocks(shard: Shard, block_bytes: int) -> Iterator[bytes]:
    """Yield blocks of whole lines. A byte-range shard owns the lines that *start* inside its range."""
    with open_stream(shard.path) as f:
        remaining = None
        if shard.start is not None:
            f.seek(max(shard.start - 1, 0))
            if shard.start > 0:
                f.readline()  # finish the line that began before the range (a preceding "\n" ends it at once)
            remaining = (shard.stop or 0) - f.tell()
        tail = b""
        while True:
            if remaining is not None and remaining <= 0:
                if tail:
                    yield tail + f.readline()
                return
            chunk = f.read(block_bytes if remaining is None else min(block_bytes, remaining))
            if not chunk:
                if tail.strip():
                    yield tail
                return
            if remaining is not None:
                remaining -= len(chunk)
            data = tail + chunk
            cut = data.rfind(b"\n")
            if cut < 0:
                tail = data
                continue
            tail = data[cut + 1 :]
            yield data[: cut + 1]


def _parse_block(
    block: bytes, schema: pa.Schema | None, shard: Shard, keep: list[str] | None = None
) -> tuple[pa.Table | None, pa.RecordBatch | None]:
    """Parse a block of lines with Arrow against ``schema``; only when that fails, line by line.

    Lines nested too deep for Arrow are taken out first (:func:`mdf.io.jsonl_values.split_deep`): Arrow's
    parser crashes on them. With ``keep`` (the recipe's ``columns``) fields outside it are ignored once every
    kept field is typed."""
    block, deep = split_deep(block)
    if schema is not None and keep:
        schema = pa.schema([f for f in schema if f.name in keep])
    ignore = keep is not None and schema is not None and set(keep) <= set(schema.names)
    opts = pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore" if ignore else "infer")
    try:
        table = pajson.read_json(
            io.BytesIO(block), read_options=pajson.ReadOptions(block_size=len(block) + 1), parse_options=opts
        )
        rejected = None
        if beyond_int64(table):  # Arrow took an integer past int64 for a double: line by line, where it is rejected
            table, rejected = _parse_lines(block, schema, shard, keep)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        table, rejected = _parse_lines(block, schema, shard, keep)
    if deep:
        rejects = [(line.decode("utf-8", "replace"), BAD_VALUE, deep_detail()) for line in deep]
        rejected = _rejected_batch(rejects if rejected is None else _rows_of(rejected) + rejects, shard)
    return table, rejected


def _parse_lines(
    block: bytes, schema: pa.Schema | None, shard: Shard, keep: list[str] | None = None
) -> tuple[pa.Table | None, pa.RecordBatch]:
    """Slow path for a block that failed: sort lines into good records and rejected raw lines with reasons."""
    good: list[dict[str, Any]] = []
    raw: list[str] = []
    reasons: list[str] = []
    details: dict[int, str] = {}
    for line in block.split(b"\n"):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raw.append(line.decode("utf-8", "replace"))
            reasons.append(f"reader:invalid_utf8 at byte {exc.start}")
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raw.append(text)
            reasons.append(f"reader:bad_json: {exc.msg} at column {exc.colno}")
            continue
        except (RecursionError, ValueError) as exc:  # deep lines are out already (split_deep): a second guard;
            details[len(raw)] = deep_detail() if isinstance(exc, RecursionError) else str(exc)[:200]  # 5,000 digits
            raw.append(text)
            reasons.append(BAD_VALUE)
            continue
        if not isinstance(obj, dict):
            raw.append(text)
            reasons.append(f"reader:not_an_object: {type(obj).__name__}")
            continue
        if keep:
            obj = {k: obj[k] for k in keep if k in obj}
        why = bad_value(text, obj)
        if why is not None:
            details[len(raw)] = why
            raw.append(text)
            reasons.append(BAD_VALUE)
            continue
        good.append(obj)
        raw.append(text)
        reasons.append("")
    table = _rows_to_table(good, schema, raw, reasons)
    bad = [(r, why, details.get(i)) for i, (r, why) in enumerate(zip(raw, reasons, strict=True)) if why]
    return table, _rejected_batch(bad, shard)


def _rejected_batch(rows: list[tuple[str, str, str | None]], shard: Shard) -> pa.RecordBatch:
    """Reader rejections: ``(raw line, reason, detail)`` each, with the shard they come from."""
    return pa.RecordBatch.from_arrays(
        [
            pa.array([r for r, _, _ in rows], pa.string()),
            pa.array([w for _, w, _ in rows], pa.string()),
            pa.array([d for _, _, d in rows], pa.string()),
            pa.repeat(lit(shard.id), len(rows)),
        ],
        names=["_raw", REASON, REASON_DETAIL, "_shard"],
    )


def _rows_of(batch: pa.RecordBatch) -> list[tuple[str, str, str | None]]:
    cols = [batch.column(n).to_pylist() for n in ("_raw", REASON, REASON_DETAIL)]
    return list(zip(*cols, strict=True))


_UNFIT = (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError, OverflowError)  # the last two: a safety net


def _rows_to_table(
    rows: list[dict[str, Any]], schema: pa.Schema | None, raw: list[str], reasons: list[str]
) -> pa.Table | None:
    if not rows:
        return None
    if schema is None:  # no clean block seen yet: the first non-null value of each field sets its type
        schema = _first_types(rows)
    try:
        return pa.Table.from_pylist(rows, schema=_widen(schema, rows))
    except _UNFIT:
        pass
    # one record has a value of the wrong type for the schema: find it and reject it
    ok_rows, j = [], 0
    for i, why in enumerate(reasons):
        if why:
            continue
        row = rows[j]
        j += 1
        try:
            pa.Table.from_pylist([row], schema=_widen(schema, [row]))
            ok_rows.append(row)
        except _UNFIT as exc:
            reasons[i] = f"reader:type_mismatch: {exc}"
    return pa.Table.from_pylist(ok_rows, schema=_widen(schema, ok_rows)) if ok_rows else None


def _first_types(rows: list[dict[str, Any]]) -> pa.Schema:
    types: dict[str, pa.DataType] = {}
    for row in rows:
        for k, v in row.items():
            if v is not None and k not in types:
                types[k] = pa.array([v]).type
    names = list(dict.fromkeys(k for r in rows for k in r))
    return pa.schema([(k, types.get(k, pa.null())) for k in names])


def _widen(schema: pa.Schema | None, rows: list[dict[str, Any]]) -> pa.Schema | None:
    """The block schema plus any new fields the rows bring (inferred), like the fast path's ``infer``."""
    if schema is None:
        return None
    extra = {k for r in rows for k in r} - set(schema.names)
    if not extra:
        return schema
    inferred = pa.Table.from_pylist([{k: r.get(k) for k in extra} for r in rows]).schema
    return pa.unify_schemas([schema, inferred])


class JsonlWriter(PartFiles):
    """Writes one JSON Lines part file per shard (optionally .gz / .zst), atomically; bytes become base64."""

    name = "jsonl"

    class Params(Params):
        path: str = Field(description="output folder")
        compression: str = Field("none", pattern="^(none|gz|zst)$", description="none, gz or zst")
        drop_columns: list[str] = Field(
            default_factory=list, description="columns not written (e.g. the raw HTML once text is extracted)"
        )

    @classmethod
    def part_suffix(cls, params: Any) -> str:
        return ".jsonl" + ("" if params.compression == "none" else "." + params.compression)

    def _open(self, tmp_path: str, schema: pa.Schema) -> IO[bytes]:
        return open_stream(tmp_path, "wb", compression=self.params.compression)

    def _write(self, handle: IO[bytes], batch: pa.RecordBatch) -> None:
        lines = [json.dumps(row, ensure_ascii=False, default=_json_default) for row in batch.to_pylist()]
        if lines:
            handle.write(("\n".join(lines) + "\n").encode("utf-8"))

    def _close(self, handle: IO[bytes]) -> None:
        handle.close()


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)
