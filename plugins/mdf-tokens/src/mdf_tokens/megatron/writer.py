"""``megatron`` writer: each input shard's documents as Megatron-Core indexed datasets (``.bin`` + ``.idx``).

One file pair per input shard, named after it as Parquet parts are (``<shard>.bin``/``<shard>.idx``: the prefix
``<shard>`` is what Megatron's ``--data-path`` takes), written under ``.tmp`` names and renamed on commit, so the
run's rules hold as for Parquet: a killed shard leaves nothing visible, a redone shard replaces its pair,
``--resume`` skips committed shards, ``--overwrite`` swaps the whole folder, an ``s3://`` output is staged and
published (core's storage layer uploads what commit returns). ``max_tokens_per_file`` rotates a shard's output to
``<shard>.1.bin``, ``<shard>.2.bin``, ... at document boundaries (a document is never cut across files).

The ``.bin`` is streamed: a batch's ids go to the file as one buffer (the Arrow list's values, cast to the file's
dtype in numpy); only the sequence lengths stay in memory (4 bytes a sequence) until the ``.idx`` is written at
commit. The dtype is uint16 when the vocabulary fits (Megatron's own rule, from the ``tokens`` column's
``mdf.token_dtype`` metadata that ``tokenize`` sets) and int32 otherwise; an id that does not fit fails the run
naming it instead of wrapping around.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field

from mdf import OperatorError, Params, Writer, as_numpy
from mdf_tokens.megatron.format import write_index
from mdf_tokens.schema import DTYPE_KEY, SEQUENCES

_LIMITS = {np.dtype(np.uint16): 1 << 16, np.dtype(np.int32): 1 << 31}


@dataclass
class _File:
    final: str  # the prefix: <path>/<shard>[.<n>]
    bin: BinaryIO
    tokens: int = 0
    lengths: list[np.ndarray] = field(default_factory=list)  # sequence lengths, per written batch
    docs: list[np.ndarray] = field(default_factory=list)  # sequences per document, per written batch


@dataclass
class _Shard:
    files: list[_File] = field(default_factory=list)


class MegatronWriter(Writer):
    """Megatron-Core indexed datasets (.bin + .idx) from a token-id column, one file pair per shard."""

    name = "megatron"

    class Params(Params):
        path: str = Field(description="output folder (local or s3://)")
        column: str = Field("tokens", description="list column of token ids (tokenize writes it)")
        max_tokens_per_file: int | None = Field(
            None, gt=0, description="start a new file pair past this many tokens (at a document boundary)"
        )
        dtype: Literal["auto", "uint16", "int32"] = Field(
            "auto",
            description="token type in .bin; auto = uint16 when the tokenizer's vocabulary is below 65,500 (as "
            "Megatron chooses; from the column's metadata), else int32",
        )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        os.makedirs(self.params.path, exist_ok=True)
        self._open: dict[str, _Shard] = {}
        self._dtype: np.dtype | None = None if self.params.dtype == "auto" else np.dtype(self.params.dtype)

    def part_prefix(self, shard_id: str, piece: int) -> str:
        return os.path.join(self.params.path, shard_id if piece == 0 else f"{shard_id}.{piece}")

    def write(self, batch: pa.RecordBatch, shard_id: str) -> None:
        shard = self._open.setdefault(shard_id, _Shard())
        if batch.num_rows == 0:
            return
        idx = batch.schema.get_field_index(self.params.column)
        if idx < 0:
            raise OperatorError(
                f"writer 'megatron': no column '{self.params.column}' in the batch (it has {batch.schema.names}); "
                "tokenize the text first (the tokenize operator writes 'tokens') or set writer.column"
            )
        dtype = self._dtype_for(batch.schema.field(idx))
        ids, doc_tokens = _ids(batch.column(idx), dtype, shard_id)
        seq_lengths, seq_per_doc = _sequences(batch, doc_tokens)
        self._append(shard_id, shard, ids, doc_tokens, seq_lengths, seq_per_doc)

    def _dtype_for(self, fld: pa.Field) -> np.dtype:
        """The file dtype, fixed by the first batch for the whole run (every part has the same)."""
        if self._dtype is None:
            meta = fld.metadata or {}
            self._dtype = np.dtype(meta.get(DTYPE_KEY, b"int32").decode())
        return self._dtype

    def _append(
        self, shard_id: str, shard: _Shard, ids: np.ndarray, doc_tokens: np.ndarray, seq_lengths: np.ndarray,
        seq_per_doc: np.ndarray,
    ) -> None:  # fmt: skip
        """Write the batch's documents, rotating files at ``max_tokens_per_file`` between documents."""
        limit = self.params.max_tokens_per_file
        ends = np.cumsum(doc_tokens, dtype=np.int64)
        seq_ends = np.cumsum(seq_per_doc, dtype=np.int64)
        doc = 0
        while doc < len(doc_tokens):
            f = shard.files[-1] if shard.files else self._new_file(shard_id, shard)
            start_tok = int(ends[doc - 1]) if doc else 0
            stop = len(doc_tokens)
            if limit is not None:  # the documents that fit in what the file has left
                fit = int(np.searchsorted(ends, start_tok + limit - f.tokens, side="right"))
                if fit <= doc and f.lengths:  # not even the next one: a new file
                    self._new_file(shard_id, shard)
                    continue
                stop = min(max(fit, doc + 1), stop)  # a document longer than the limit fills a file alone
            stop_tok = int(ends[stop - 1])
            first_seq = int(seq_ends[doc - 1]) if doc else 0
            f.bin.write(memoryview(ids[start_tok:stop_tok]).cast("B"))
            f.tokens += stop_tok - start_tok
            f.lengths.append(seq_lengths[first_seq : int(seq_ends[stop - 1])])
            f.docs.append(seq_per_doc[doc:stop])
            doc = stop

    def _new_file(self, shard_id: str, shard: _Shard) -> _File:
        prefix = self.part_prefix(shard_id, len(shard.files))
        f = _File(prefix, open(prefix + ".bin.tmp", "wb"))  # noqa: SIM115 - closed on commit or abort
        shard.files.append(f)
        return f

    def commit(self, shard_id: str) -> list[str]:
        shard = self._open.pop(shard_id, None)
        if shard is None:
            return []
        dtype = self._dtype or np.dtype(np.int32)
        paths = []
        for f in shard.files:
            f.bin.close()
            lengths = np.concatenate(f.lengths) if f.lengths else np.zeros(0, np.int32)
            per_doc = np.concatenate(f.docs) if f.docs else np.zeros(0, np.int64)
            docs = np.concatenate([[0], np.cumsum(per_doc, dtype=np.int64)])
            with open(f.final + ".idx.tmp", "wb") as out:
                write_index(out, dtype, lengths, docs)
            os.replace(f.final + ".bin.tmp", f.final + ".bin")  # the .bin first: an .idx never names a missing .bin
            os.replace(f.final + ".idx.tmp", f.final + ".idx")
            paths += [f.final + ".bin", f.final + ".idx"]
        return paths

    def abort(self, shard_id: str) -> None:
        shard = self._open.pop(shard_id, None)
        for f in shard.files if shard else []:
            f.bin.close()
            for tmp in (f.final + ".bin.tmp", f.final + ".idx.tmp"):
                if os.path.exists(tmp):
                    os.remove(tmp)

    def close(self) -> None:
        for shard_id in list(self._open):
            self.abort(shard_id)


def _ids(column: pa.Array | pa.ChunkedArray, dtype: np.dtype, shard_id: str) -> tuple[np.ndarray, np.ndarray]:
    """``(every id in the file's dtype, tokens per row)``; a null row has none. An id that the dtype cannot hold
    fails, naming the shard (a tokenizer whose vocabulary outgrew uint16, or dtype set by hand too small)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        raise OperatorError(f"writer 'megatron': column of type {column.type}, expected a list of integer ids")
    counts = as_numpy(pc.fill_null(pc.list_value_length(column), 0)).astype(np.int64)
    flat = column.flatten()  # honours a sliced array's offset, skips null rows
    if not pa.types.is_integer(flat.type):
        raise OperatorError(f"writer 'megatron': ids of type {flat.type}, expected integers")
    values = as_numpy(flat) if not flat.null_count else as_numpy(pc.fill_null(flat, 0))
    if values.dtype == dtype:
        out = values
    else:
        if len(values) and (int(values.max()) >= _LIMITS[dtype] or int(values.min()) < 0):
            raise OperatorError(
                f"writer 'megatron': shard {shard_id} has token id {int(values.max())}, which {dtype} cannot hold; "
                "set writer.dtype: int32 (or check the tokenizer's vocabulary size)"
            )
        out = values.astype(dtype)
    return np.ascontiguousarray(out), counts


def _sequences(batch: pa.RecordBatch, doc_tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sequence lengths, sequences per document)``: a document is one sequence, unless the batch carries
    ``sequence_lengths`` (``tokenize`` with ``long_documents: split``, or Megatron input read back)."""
    idx = batch.schema.get_field_index(SEQUENCES)
    if idx < 0:
        return doc_tokens.astype(np.int32), np.ones(len(doc_tokens), np.int64)
    col = batch.column(idx)
    per_doc = as_numpy(pc.fill_null(pc.list_value_length(col), 0)).astype(np.int64)
    lengths = as_numpy(col.flatten()).astype(np.int32) if len(col) else np.zeros(0, np.int32)
    single = per_doc == 0  # a row without pieces is one sequence of its own length
    if single.any():
        per_doc = np.where(single, 1, per_doc)
        ends = np.cumsum(per_doc)
        full = np.empty(int(ends[-1]) if len(ends) else 0, np.int32)
        mask = np.ones(len(full), bool)
        mask[ends[single] - 1] = False
        full[mask] = lengths
        full[ends[single] - 1] = doc_tokens[single]
        lengths = full
    return lengths, per_doc
