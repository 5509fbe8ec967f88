"""Column names and metadata the tokenize operator, the Megatron writer and the Megatron reader agree on."""

from __future__ import annotations

TOKENS = "tokens"
"""Token ids of each document: ``list<uint32>``."""
N_TOKENS = "n_tokens"
"""Tokens of each document (int64), BOS/EOS included."""
SEQUENCES = "sequence_lengths"
"""``list<int32>``, only where a document is several Megatron sequences (``tokenize``'s ``long_documents: split``
pieces, or such a document read back from Megatron files); a row without it is one sequence."""
SOURCE = "source"
"""Which source of a mix a document came from (the ``megatron`` reader's ``sources[].name``)."""
DTYPE_KEY = b"mdf.token_dtype"
"""Field metadata of the ids column: ``uint16`` or ``int32``, the Megatron dtype the ids fit (from the
tokenizer's vocabulary size, or the dtype of the Megatron files read); the ``megatron`` writer's ``dtype: auto``
reads it."""
