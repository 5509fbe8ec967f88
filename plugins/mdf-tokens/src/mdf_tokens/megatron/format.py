"""Megatron-Core's indexed dataset on disk: a ``.bin`` of token ids and an ``.idx`` that says where each sequence and
document starts. Written and read from the layout of ``megatron.core.datasets.indexed_dataset`` (``_IndexWriter``,
``_IndexReader``), which is:

``.idx``: ``MMIDIDX\\x00\\x00`` (9 bytes), version ``1`` (uint64 little endian), the dtype code (uint8: 8 =
uint16, 4 = int32, as Megatron's ``DType`` enum), the sequence count and the document count (uint64 each), then
the sequence lengths (int32, in tokens), the sequence pointers (int64, byte offsets into ``.bin``) and the document
indices (int64: document ``d`` is sequences ``[idx[d], idx[d+1])``; it starts with 0, so it holds documents + 1
values). ``.bin``: the ids of every sequence back to back in the dtype, no header.

mdf writes one sequence per document, or a document's pieces as its sequences where ``tokenize`` split it
(``sequence_lengths``). Megatron's GPT dataset samples sequences, so a split document trains as its pieces.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

HEADER = b"MMIDIDX\x00\x00"
VERSION = 1
CODES = {np.dtype(np.uint8): 1, np.dtype(np.int8): 2, np.dtype(np.int16): 3, np.dtype(np.int32): 4,
         np.dtype(np.int64): 5, np.dtype(np.float64): 6, np.dtype(np.float32): 7, np.dtype(np.uint16): 8}  # fmt: skip
DTYPES = {code: dtype for dtype, code in CODES.items()}
_FIXED = struct.Struct("<9sQBQQ")  # header, version, dtype code, sequence count, document count
HEADER_BYTES = _FIXED.size  # 34
UINT16_VOCAB = 65500
"""Megatron's ``preprocess_data.py`` writes uint16 when the vocabulary is below this size (its
``__best_fitting_dtype``), int32 otherwise; mdf chooses the same way."""


class FormatError(ValueError):
    """An ``.idx``/``.bin`` pair that is not a Megatron indexed dataset (or not a whole one)."""


def token_dtype(vocab_size: int) -> np.dtype:
    """uint16 when the vocabulary fits, as Megatron chooses; int32 otherwise."""
    return np.dtype(np.uint16) if vocab_size < UINT16_VOCAB else np.dtype(np.int32)


def write_index(f: BinaryIO, dtype: np.dtype, sequence_lengths: np.ndarray, document_indices: np.ndarray) -> None:
    """Write an ``.idx``: ``sequence_lengths`` (int32, per sequence) and ``document_indices`` (int64, starting with 0
    and ending with the sequence count)."""
    lengths = np.ascontiguousarray(sequence_lengths, dtype=np.int32)
    pointers = np.zeros(len(lengths), dtype=np.int64)
    if len(lengths) > 1:
        np.cumsum(lengths[:-1], dtype=np.int64, out=pointers[1:])
    pointers *= np.dtype(dtype).itemsize
    docs = np.ascontiguousarray(document_indices, dtype=np.int64)
    f.write(_FIXED.pack(HEADER, VERSION, CODES[np.dtype(dtype)], len(lengths), len(docs)))
    f.write(lengths.tobytes())
    f.write(pointers.tobytes())
    f.write(docs.tobytes())


@dataclass(frozen=True)
class Index:
    """An ``.idx`` read back, its arrays memory-mapped (read only)."""

    path: str
    dtype: np.dtype
    sequence_lengths: np.ndarray
    sequence_pointers: np.ndarray
    document_indices: np.ndarray

    @property
    def documents(self) -> int:
        return len(self.document_indices) - 1

    @property
    def tokens(self) -> int:
        return int(self.sequence_lengths.sum(dtype=np.int64))

    def document_tokens(self) -> np.ndarray:
        """Tokens of every document (int64): its sequences' lengths summed."""
        ends = np.concatenate([[0], np.cumsum(self.sequence_lengths, dtype=np.int64)])
        return ends[self.document_indices[1:]] - ends[self.document_indices[:-1]]


def read_header_bytes(head: bytes, path: str) -> tuple[np.dtype, int, int]:
    """``(dtype, sequences, documents)`` of an ``.idx`` from its first 34 bytes (``documents`` counts the leading
    0 of the document indices, as the header does)."""
    if len(head) < _FIXED.size:
        raise FormatError(f"{path}: {len(head)} bytes, shorter than a Megatron .idx header")
    magic, version, code, sequences, documents = _FIXED.unpack(head)
    if magic != HEADER:
        raise FormatError(f"{path}: no Megatron index header (MMIDIDX); not an .idx file")
    if version != VERSION:
        raise FormatError(f"{path}: index version {version}, mdf reads version {VERSION}")
    if code not in DTYPES:
        raise FormatError(f"{path}: unknown dtype code {code}")
    return DTYPES[code], sequences, documents


def read_index(path: str) -> Index:
    """Read a local ``.idx`` (memory-mapped); :class:`FormatError` when it is cut short or inconsistent."""
    mapped: Any = np.memmap(path, dtype=np.uint8, mode="r") if os.path.getsize(path) else np.zeros(0, np.uint8)
    return parse_index(mapped, path)


def parse_index(data: Any, path: str) -> Index:
    """An ``.idx`` from its bytes (``bytes`` or a uint8 array, e.g. a memory map)."""
    raw = np.frombuffer(data, np.uint8) if isinstance(data, bytes | bytearray | memoryview) else data
    dtype, sequences, documents = read_header_bytes(bytes(raw[: _FIXED.size]), path)
    need = _FIXED.size + sequences * (4 + 8) + documents * 8
    if len(raw) != need:
        raise FormatError(f"{path}: {len(raw)} bytes where its counts need {need}; the file is damaged")
    at = _FIXED.size
    lengths = raw[at : at + 4 * sequences].view(np.int32)
    at += 4 * sequences
    pointers = raw[at : at + 8 * sequences].view(np.int64)
    docs = raw[at + 8 * sequences :].view(np.int64)
    if documents < 1 or docs[0] != 0 or docs[-1] != sequences or np.any(np.diff(docs) < 0):
        raise FormatError(f"{path}: document indices do not run from 0 to the sequence count; the file is damaged")
    return Index(path, dtype, lengths, pointers, docs)


def prefix_of(path: str) -> str:
    """``out/part`` for ``out/part.bin`` or ``out/part.idx`` (what Megatron's ``--data-path`` takes)."""
    return path[:-4] if path.endswith((".bin", ".idx")) else path
