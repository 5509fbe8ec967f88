"""One Megatron ``.idx``/``.bin`` pair as the reader uses it: its counts from the header and the ``.bin`` size, its
index loaded on first use, and documents' tokens read a batch at a time.

Local files are memory-mapped (only the pages a batch touches are read). A file on object storage (``s3://``,
``https://``) is read through :mod:`mdf.storage`: its ``.idx`` whole (about 20 bytes a document), its ``.bin`` by
ranged reads, the documents a batch needs from one file merged into runs (a shuffle window's documents are
neighbours, so a window costs a few requests, not one per document).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mdf.storage import default, is_remote
from mdf_tokens.megatron.format import HEADER_BYTES, FormatError, Index, parse_index, read_header_bytes

_GAP = 1 << 20  # read two documents' ranges as one when less than this lies between them


@dataclass(eq=False)
class MegatronFile:
    """``<prefix>.idx`` + ``<prefix>.bin``."""

    idx: str
    bin: str
    dtype: np.dtype
    sequences: int
    documents: int
    bin_size: int
    _index: Index | None = field(default=None, repr=False)
    _handle: Any = field(default=None, repr=False)

    @classmethod
    def open(cls, idx: str) -> MegatronFile:
        """Read the header and check the pair is whole; :class:`FormatError` naming the file otherwise."""
        bin_path = idx[:-4] + ".bin"
        try:
            head = _read_head(idx)
            bin_size = _size(bin_path)
        except FileNotFoundError as exc:
            raise FormatError(
                f"{exc.filename or bin_path}: missing; a Megatron dataset is an .idx and a .bin"
            ) from None
        dtype, sequences, documents = read_header_bytes(head, idx)
        if bin_size % dtype.itemsize:
            raise FormatError(f"{bin_path}: {bin_size} bytes is not a whole number of {dtype} tokens; it is damaged")
        return cls(idx, bin_path, dtype, sequences, documents - 1, bin_size)

    @property
    def tokens(self) -> int:
        return self.bin_size // self.dtype.itemsize

    def fresh(self) -> MegatronFile:
        """The same pair with nothing loaded: what one shard's read uses and closes (a reader is shared by the
        inline executor's threads, and a loader reads shard after shard: neither may keep every file's index)."""
        return MegatronFile(self.idx, self.bin, self.dtype, self.sequences, self.documents, self.bin_size)

    @property
    def index(self) -> Index:
        if self._index is None:
            data: Any = default().read_bytes(self.idx) if is_remote(self.idx) else _mapped(self.idx)
            index = parse_index(data, self.idx)
            if index.tokens != self.tokens:
                raise FormatError(
                    f"{self.idx}: its sequences hold {index.tokens} tokens, {self.bin} has {self.tokens}; the pair is "
                    "damaged or mismatched"
                )
            self._index = index
        return self._index

    @functools.cached_property
    def bounds(self) -> np.ndarray:
        """Byte offset of every sequence in the ``.bin``, then the ``.bin``'s size (int64)."""
        return np.append(self.index.sequence_pointers, np.int64(self.bin_size))

    def tokens_before(self, doc: int) -> int:
        """Tokens of the documents before ``doc`` (``doc == documents``: all of them), from two 8-byte reads of the
        ``.idx`` (its document index, then that sequence's pointer): planning a mix never loads a whole index."""
        if doc >= self.documents:
            return self.tokens
        s = self.sequences
        seq = int(np.frombuffer(self._idx_bytes(HEADER_BYTES + 12 * s + 8 * doc, 8), np.int64)[0])
        if seq >= s:
            return self.tokens
        pointer = int(np.frombuffer(self._idx_bytes(HEADER_BYTES + 4 * s + 8 * seq, 8), np.int64)[0])
        return pointer // self.dtype.itemsize

    def _idx_bytes(self, offset: int, n: int) -> bytes:
        if is_remote(self.idx):
            with default().open_random(self.idx) as f:
                return bytes(f.read_at(n, offset))
        with open(self.idx, "rb") as f:
            f.seek(offset)
            return f.read(n)

    @functools.cached_property
    def doc_tokens(self) -> np.ndarray:
        return self.index.document_tokens()

    def read(self, docs: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The tokens of ``docs`` (in the order given) and each one's sequence lengths."""
        ix = self.index
        first, last = ix.document_indices[docs], ix.document_indices[docs + 1]
        raw = self._ranges(self.bounds[first], self.bounds[last])
        seqs = [ix.sequence_lengths[a:b] for a, b in zip(first.tolist(), last.tolist(), strict=True)]
        return [r.view(self.dtype) for r in raw], seqs

    def _ranges(self, start: np.ndarray, stop: np.ndarray) -> list[np.ndarray]:
        """Bytes ``start[i]:stop[i]`` of the ``.bin`` for every ``i``: memory-mapped slices, or runs read by range."""
        if not is_remote(self.bin):
            data = self._handle if self._handle is not None else _mapped(self.bin)
            self._handle = data
            return [data[a:b] for a, b in zip(start.tolist(), stop.tolist(), strict=True)]
        order = np.argsort(start, kind="stable")
        out: list[np.ndarray] = [np.zeros(0, np.uint8)] * len(start)
        if self._handle is None:
            self._handle = default().open_random(self.bin, self.bin_size)
        i = 0
        while i < len(order):
            j, run_stop = i + 1, int(stop[order[i]])
            while j < len(order) and int(start[order[j]]) - run_stop < _GAP:
                run_stop = max(run_stop, int(stop[order[j]]))
                j += 1
            run_start = int(start[order[i]])
            buf = np.frombuffer(self._handle.read_at(run_stop - run_start, run_start), np.uint8)
            for k in order[i:j]:
                out[k] = buf[int(start[k]) - run_start : int(stop[k]) - run_start]
            i = j
        return out

    def close(self) -> None:
        """Unmap and forget what was loaded (a loader reads many shards: it holds one shard's files at a time)."""
        if self._handle is not None and hasattr(self._handle, "close"):
            self._handle.close()
        self._handle = self._index = None
        for cached in ("bounds", "doc_tokens"):
            self.__dict__.pop(cached, None)


def _mapped(path: str) -> np.ndarray:
    return np.memmap(path, dtype=np.uint8, mode="r") if os.path.getsize(path) else np.zeros(0, np.uint8)


def _read_head(path: str) -> bytes:
    if is_remote(path):
        with default().open_random(path) as f:
            return bytes(f.read_at(HEADER_BYTES, 0))
    with open(path, "rb") as f:
        return f.read(HEADER_BYTES)


def _size(path: str) -> int:
    if is_remote(path):
        return default().info(path).size
    return os.path.getsize(path)
