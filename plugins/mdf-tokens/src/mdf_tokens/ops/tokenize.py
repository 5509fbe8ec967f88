"""``tokenize``: a text column to token ids with a Hugging Face ``tokenizer.json``, in Rust on every kernel thread.

The ids are the ones the ``tokenizers`` Python package's ``Tokenizer.encode_batch(texts, add_special_tokens)`` gives
(the kernel is the same library, the ``tokenizers`` crate): ``tests/test_ids.py`` checks every id on more than
10,000 real texts for a byte-level BPE, a WordPiece and a Unigram tokenizer trained at test time. The text column
reaches Rust through the Arrow C data interface (no copy), the batch is encoded without the GIL on the kernel pool
(``MDF_NUM_THREADS``), and the ids come back as one Arrow ``list<uint32>`` (no Python object per id). Byte-level
BPE files (GPT-2's scheme, Llama 3's regex then byte level) take the kernel's own path: the crate splits out added
tokens and normalizes, the pieces' ids come from the file's merges without the crate's per-piece offsets and
strings (``rust/src/tokens_fast.rs``); other models (WordPiece, Unigram, ...) go through the crate's ``encode``.

Written: ``tokens`` (``list<uint32>``, metadata ``mdf.token_dtype``: the Megatron dtype the vocabulary fits) and
``n_tokens`` (int64). Options: ``add_bos`` / ``add_eos`` (a token string or an id, checked against the vocabulary
when the recipe is validated), ``max_tokens`` per document with ``long_documents: truncate`` (keep the first
``max_tokens``, BOS/EOS kept around the cut) or ``split`` (pieces of at most ``max_tokens``, each framed, written
as the document's Megatron sequences: the ``sequence_lengths`` column). A cut or split is counted
(``truncated``, ``tokens_cut``, ``split``, ``pieces``), never silent. A null or empty text gets zero tokens (no
BOS/EOS) and is counted (``null_texts``, ``empty_texts``), or is rejected (``tokenize:null_text``,
``tokenize:empty_text``) with ``empty: reject``.

The tokenizer file's own padding and truncation settings are switched off: padding made ids depend on the batch,
and a file's truncation (a BERT file's 512) would cut documents without a count.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, model_validator

from mdf import KERNELS, REASON, InputFile, Params, Refiner, as_numpy, with_columns
from mdf_tokens.megatron.format import token_dtype
from mdf_tokens.ops.stats import count_tokens
from mdf_tokens.schema import DTYPE_KEY, N_TOKENS, SEQUENCES, TOKENS
from mdf_tokens.tokenizer import TokenizerFileError, load, special_id

_COUNTERS = {"null": "null_texts", "empty": "empty_texts", "truncated": "truncated", "tokens_cut": "tokens_cut",
             "split": "split", "pieces": "pieces", "invalid_utf8": "invalid_utf8"}  # fmt: skip


class Tokenize(Refiner):
    """Token ids of a text column with a Hugging Face tokenizer.json (Rust, no GIL): tokens + n_tokens."""

    name = "tokenize"
    requires: ClassVar[dict[str, str]] = KERNELS
    cost_class = "model"
    reads = {"column": "string"}
    writes: ClassVar[dict[str, str] | None] = {"output": "list", "count_output": "integer"}

    class Params(Params):
        tokenizer: InputFile = Field(
            description="a Hugging Face tokenizer.json: a path, or a URL (s3://, https://) fetched once per machine "
            "into the cache; loaded and checked at validate time"
        )
        column: str = Field("text", description="string column to tokenize")
        output: str = Field(TOKENS, description="list<uint32> column of token ids")
        count_output: str = Field(N_TOKENS, description="int64 column of tokens per document")
        add_special_tokens: bool = Field(
            True, description="apply the tokenizer's post-processor template (as encode_batch does by default)"
        )
        add_bos: str | int | None = Field(None, description="token (string or id) put before each document")
        add_eos: str | int | None = Field(None, description="token (string or id) put after each document")
        max_tokens: int | None = Field(None, gt=0, description="most tokens per document, BOS/EOS included")
        long_documents: Literal["truncate", "split"] = Field(
            "truncate", description="a document over max_tokens: keep its start, or split it into framed pieces"
        )
        empty: Literal["keep", "reject"] = Field(
            "keep", description="a null or empty text: keep with zero tokens (counted), or reject it"
        )
        source_column: str | None = Field(None, description="column naming each row's source: tokens counted per value")

        @model_validator(mode="after")
        def _check(self) -> Tokenize.Params:
            """Load the tokenizer and resolve BOS/EOS now: a bad file or token fails validate, naming it."""
            try:
                tok = load(self.tokenizer)
                ids = [special_id(tok, self.add_bos, "add_bos"), special_id(tok, self.add_eos, "add_eos")]
            except TokenizerFileError as exc:
                raise ValueError(str(exc)) from None
            framing = sum(i is not None for i in ids)
            if self.max_tokens is not None and self.max_tokens <= framing:
                raise ValueError(f"max_tokens = {self.max_tokens} leaves no room for text beside BOS/EOS; raise it")
            return self

    def setup(self) -> None:
        p = self.params
        self.tok = load(p.tokenizer)
        self.bos = special_id(self.tok, p.add_bos, "add_bos")
        self.eos = special_id(self.tok, p.add_eos, "add_eos")
        dtype = token_dtype(self.tok.id_bound)
        self.field = pa.field(p.output, pa.list_(pa.uint32()), metadata={DTYPE_KEY: dtype.name.encode()})

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        p = self.params
        texts = batch.column(p.column)
        tokens, counts, stats = self.tok.encode(
            texts, p.add_special_tokens, self.bos, self.eos, p.max_tokens, p.long_documents == "split"
        )
        for key, name in _COUNTERS.items():
            if stats[key]:
                self.metrics.count(name, stats[key])
        n = as_numpy(counts)
        sources = batch.column(p.source_column) if p.source_column else None
        columns: dict[str, Any] = {p.output: tokens.cast(self.field.type), p.count_output: counts}
        if p.long_documents == "split" and p.max_tokens is not None:
            columns[SEQUENCES] = _pieces(n, p.max_tokens)
        out = with_columns(batch, columns)
        out = out.set_column(out.schema.get_field_index(p.output), self.field, out.column(p.output))
        if p.empty == "reject" and stats["null"] + stats["empty"]:
            reason = pc.if_else(
                pc.is_null(texts),
                "null_text",
                pc.if_else(pc.equal(counts, 0), "empty_text", pa.scalar(None, pa.string())),
            )
            kept = n > 0
            count_tokens(self.metrics, n[kept], _take(sources, kept))
            return out.append_column(REASON, reason)
        count_tokens(self.metrics, n, sources)
        return out


def _take(values: pa.Array | pa.ChunkedArray | None, mask: np.ndarray) -> Any:
    return None if values is None else values.filter(pa.array(mask))


def _pieces(n: np.ndarray, max_tokens: int) -> pa.ListArray:
    """Each document's Megatron sequences: ``max_tokens`` each but the last (what the kernel's split made)."""
    k = (n + max_tokens - 1) // max_tokens  # 0 pieces for an empty document
    offsets = np.zeros(len(n) + 1, dtype=np.int32)
    np.cumsum(k, out=offsets[1:])
    lengths = np.full(int(offsets[-1]), max_tokens, dtype=np.int32)
    last = offsets[1:][k > 0] - 1
    lengths[last] = (n[k > 0] - (k[k > 0] - 1) * max_tokens).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(lengths))
