"""URLs the storage layer accepts, and how they split into a file system and a path.

A plain path (``data/x.parquet``, ``/abs/x``) and ``file://`` are local; ``s3://bucket/key`` goes to pyarrow's
S3 file system; every other ``scheme://`` to fsspec (``https://``, ``gs://``, ``az://``, ``hf://``...), so
any protocol fsspec knows works when its package is installed.
"""

from __future__ import annotations

import os
import re

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
READ_ONLY = frozenset({"http", "https"})
_WILDCARD = re.compile(r"[*?\[]")


def scheme_of(url: str) -> str:
    """``"s3"``, ``"https"``, ... or ``"file"`` for a plain path."""
    m = _SCHEME.match(url)
    return m.group(1).lower() if m else "file"


def is_remote(url: str) -> bool:
    return scheme_of(url) != "file"


def strip_scheme(url: str) -> str:
    """``s3://bucket/key`` -> ``bucket/key`` (pyarrow's path); ``file:///x`` and plain paths -> absolute path."""
    scheme = scheme_of(url)
    if scheme == "file":
        return os.path.abspath(os.path.expanduser(url.removeprefix("file://")))
    return url.split("://", 1)[1]


def with_scheme(scheme: str, path: str) -> str:
    return path if scheme == "file" else f"{scheme}://{path}"


def join(base: str, *names: str) -> str:
    """``join("s3://b/out", "_mdf", "lock")`` -> ``s3://b/out/_mdf/lock``; plain paths use ``os.path.join``."""
    if not is_remote(base):
        return os.path.join(base, *names)
    out = base.rstrip("/")
    for name in names:
        out += "/" + name.strip("/")
    return out


def has_wildcard(path: str) -> bool:
    return bool(_WILDCARD.search(path))


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob of ``/``-separated keys: ``*`` and ``?`` stay inside one segment, ``**`` spans segments
    (``a/**/b`` also matches ``a/b``), ``[...]`` is a character class. Python 3.11 has no ``glob.translate``."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif c == "*":
            out, i = out + "[^/]*", i + 1
        elif c == "?":
            out, i = out + "[^/]", i + 1
        elif c == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            out += "[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]"
            i = end + 1
        else:
            out, i = out + re.escape(c), i + 1
    return re.compile(out + r"\Z", re.DOTALL)


def literal_prefix(path: str) -> str:
    """The folder part of ``path`` before its first wildcard: where a listing has to start."""
    m = _WILDCARD.search(path)
    head = path if m is None else path[: m.start()]
    return head if m is None else head.rsplit("/", 1)[0] if "/" in head else ""
