"""A Hugging Face ``tokenizer.json``, loaded once per process by the Rust kernel and shared by its threads.

Checked when the recipe is validated, so a run fails before any work (exit 2, naming the file) on a path with no
file, a file that is not a tokenizer (not JSON, or JSON of another shape), or a BOS/EOS token the vocabulary does
not have. A URL (``s3://``, ``https://``) is copied once per machine into mdf's cache (``$MDF_CACHE_DIR/tokenizers``)
by :func:`mdf.storage.local_copy`, the same fetch fastText models get; every process of the machine then loads the
local copy.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from mdf import native_kernel
from mdf.storage import FetchError, is_remote, local_copy

_KERNEL = "TextTokenizer"
_LOADED: dict[tuple[str, int, int], Any] = {}
_LOCK = threading.Lock()


class TokenizerFileError(ValueError):
    """The tokenizer cannot be used; the message names the file and the fix."""


def load(path: str) -> Any:
    """The ``mdf_kernels.TextTokenizer`` for ``path`` (a file or URL), loaded once per process and file version."""
    local = _local(path)
    try:
        st = os.stat(local)
    except FileNotFoundError:
        raise TokenizerFileError(f"tokenizer {path!r}: no such file; give the path of a tokenizer.json") from None
    if not os.path.isfile(local):
        raise TokenizerFileError(f"tokenizer {path!r} is a folder; give the path of its tokenizer.json")
    key = (os.path.realpath(local), st.st_size, st.st_mtime_ns)
    with _LOCK:
        tok = _LOADED.get(key)
        if tok is None:
            cls = native_kernel(_KERNEL, "tokenize")
            try:
                tok = cls(local)
            except ValueError as exc:
                detail = str(exc).split(": ", 2)[-1]  # "TextTokenizer: '<local path>': <why>"
                raise TokenizerFileError(f"tokenizer {path!r}: {detail}") from None
            _LOADED[key] = tok
        return tok


def _local(path: str) -> str:
    if not is_remote(path):
        return os.path.expanduser(path)
    try:
        return local_copy(path, "tokenizers")
    except FetchError as exc:
        raise TokenizerFileError(f"cannot read the tokenizer {path!r}: {exc.message}") from None


def special_id(tok: Any, value: str | int | None, what: str) -> int | None:
    """The id of a BOS/EOS given by token string or by id; :class:`TokenizerFileError` when the vocabulary lacks it."""
    if value is None:
        return None
    if isinstance(value, int):
        if not 0 <= value < tok.id_bound:
            raise TokenizerFileError(
                f"{what} id {value} is outside the tokenizer's ids (0..{tok.id_bound - 1}); give a token it has"
            )
        return value
    found = tok.token_to_id(value)
    if found is None:
        raise TokenizerFileError(
            f"{what} token {value!r} is not in the tokenizer's vocabulary; give one it has (e.g. its "
            "end-of-text token, such as '</s>' or '<|endoftext|>'), or its id"
        )
    return int(found)
