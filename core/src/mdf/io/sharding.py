"""Turn the recipe's path globs into files and stable shard ids.

A pattern with a scheme (``s3://bucket/cc/**/*.parquet``, ``https://host/x.warc.gz``, any fsspec protocol) is
expanded by the storage layer (:meth:`mdf.storage.Storage.expand`), whose listing already carries each object's
size and mtime/ETag-time: they are kept here (:func:`file_info`) so readers and the run fingerprint do not send a
second request per object. Local paths are listed exactly as before.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from mdf.errors import RecipeError
from mdf.io import walk
from mdf.storage.redact import redact_url
from mdf.storage.urls import is_remote

if TYPE_CHECKING:
    from mdf.storage import ObjectInfo, Storage

_UNSAFE = re.compile(r"[^\w-]+")  # \w: letters and digits of every script, and "_"
MAX_ID_BYTES = 160
"""Longest shard id in UTF-8 bytes: with a range suffix (``-rg00000``), a schema piece (``.1``), the extension
(``.jsonl.zst``) and ``.tmp`` a part file name stays far under the 255 bytes file systems allow."""
_EXTENSIONS = (".parquet", ".jsonl", ".json", ".ndjson", ".gz", ".zst", ".zstd", ".warc", ".tar")
_PIECE = re.compile(r"-(?:b|rg)\d+$")
"""What readers append to a shard id for a piece of a file (``-b00003``, ``-rg00012``): a file whose own name
ends so gets a hash, or it could write the part file of another file's piece."""

NOTES: list[str] = []
"""What the last expansions did that the user may not expect (a skipped symlink loop, an input named twice),
one line each: the run logs and prints them (:func:`take_notes`)."""


def glob_files(pattern: str) -> list[str]:
    """The local files ``pattern`` matches, sorted; ``**`` enters each real folder once, so a symlink loop ends,
    and a skipped one becomes a note of the run (:mod:`mdf.io.walk`). For readers that list files themselves."""
    return walk.glob_files(pattern, NOTES)


def take_notes() -> list[str]:
    """The notes of the expansions since the last call, once."""
    out = NOTES[:]
    NOTES.clear()
    return out


def expand_paths(
    patterns: list[str], yaml_path: str = "reader.paths", extensions: tuple[str, ...] | None = None
) -> list[str]:
    """Expand globs (``**`` allowed) and directories to a sorted, de-duplicated list of files.

    A file named twice (two overlapping globs, a symlink, the same URL twice) is read once, under its shortest
    path, and a note says so (:data:`NOTES`); ``**`` walks each real folder once, so a symlink loop ends and is
    named in a note (:mod:`mdf.io.walk`). Two URLs that differ only in credentials (two presigned URLs of one
    object) are refused: they cannot be told apart in what the run writes (:mod:`mdf.storage.redact`).

    A directory contributes its files whose names end with one of ``extensions`` (case-insensitive; all files
    when ``None``), so a README or a ``.csv`` beside the data is not read as data. A glob is the user's own
    choice and is taken as written. Raises :class:`RecipeError` naming the pattern when it matches nothing,
    before any work is done.
    """
    files: list[str] = []
    remote: list[str] = []
    for i, pattern in enumerate(patterns):
        if is_remote(pattern):
            remote.extend(_expand_remote(pattern, f"{yaml_path}[{i}]", extensions))
            continue
        p = os.path.expanduser(pattern)
        if os.path.isdir(p):
            found = [f for f in sorted(Path(p).rglob("*")) if f.is_file() and not _hidden(f.relative_to(p))]
            matched = [str(f) for f in found if extensions is None or f.name.lower().endswith(extensions)]
            if found and not matched:
                raise RecipeError(
                    f"folder {pattern!r} holds no file ending in {', '.join(extensions or ())} "
                    f"(it has e.g. {found[0].name!r}); point at the data files or use a glob",
                    f"{yaml_path}[{i}]",
                )
        else:
            matched = glob_files(p)
        if not matched:
            raise RecipeError(
                f"no input file matches {pattern!r} (cwd {os.getcwd()}); fix the path or glob",
                f"{yaml_path}[{i}]",
            )
        files.extend(matched)
    unique: dict[str, str] = {}  # real path -> first path naming it
    for f in sorted(dict.fromkeys(os.path.abspath(f) for f in files), key=lambda f: (len(f), f)):
        unique.setdefault(os.path.realpath(f), f)
    by_name: dict[str, str] = {}  # the URL as written down -> the URL
    for url in remote:
        other = by_name.setdefault(redact_url(url), url)
        if other != url:
            raise RecipeError(
                f"two inputs differ only in credentials: {redact_url(url)!r} (e.g. two presigned URLs of one object); "
                "name each object once",
                yaml_path,
            )
    repeated = len(files) + len(remote) - len(unique) - len(by_name)
    if repeated:
        NOTES.append(f"{repeated} input file(s) named more than once in {yaml_path} (overlapping globs, links or "
                     "repeated URLs) are read once")  # fmt: skip
    return sorted([*unique.values(), *by_name.values()])


_LISTED: dict[str, ObjectInfo] = {}
"""Objects the last expansions listed, by URL: their size and mtime without another request."""


def _expand_remote(pattern: str, where: str, extensions: tuple[str, ...] | None) -> list[str]:
    """One remote pattern through the storage layer; every failure is one line naming the pattern and ``where``
    (exit 2: the recipe names input that cannot be listed, found before any work)."""
    from mdf.storage import ObjectNotFound, StorageError, default  # the S3 layer: only for URLs (~20 ms)

    storage = default()
    try:
        found = storage.expand([pattern], where.rsplit("[", 1)[0], extensions)
    except ObjectNotFound as exc:
        detail = str(exc).removeprefix(f"{exc.url}: ").split(" (", 1)[0].split("; ", 1)[0]
        bucket = _bucket(pattern)
        if bucket is not None and not _exists(storage, bucket):
            detail = f"bucket {bucket.removeprefix('s3://')!r} does not exist at this endpoint"
        raise RecipeError(
            f"no input object matches {redact_url(pattern)!r} ({detail}); fix the URL or glob", where
        ) from None
    except StorageError as exc:
        from mdf.storage.retry import is_connection_failure

        detail = str(exc).removeprefix(f"{exc.url}: ")
        hint = ""
        if is_connection_failure(detail):  # said first: the rest of an SDK's message is its retries' story
            detail = f"cannot connect to {storage.endpoint_of(pattern)} ({detail})"
            hint = "; check the endpoint and the network"
        elif "ACCESS_DENIED" in detail or "AccessDenied" in detail or " 403" in detail:
            hint = "; check the credentials (AWS_ACCESS_KEY_ID/AWS_PROFILE, the credential chain) and the bucket policy"
        elif "after" in detail and "tries" in detail:
            hint = "; check the endpoint (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL) and the network"
        raise RecipeError(f"cannot list {redact_url(pattern)!r}: {detail}{hint}", where) from None
    for obj in found:
        _LISTED[obj.url] = obj
    return [obj.url for obj in found]


def _bucket(url: str) -> str | None:
    """``s3://bucket`` of an ``s3://`` URL (where a missing bucket is worth naming), else ``None``."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}" if scheme in ("s3", "s3a") and rest else None


def _exists(storage: Storage, url: str) -> bool:
    from mdf.storage import StorageError

    try:
        return storage.exists(url)
    except StorageError:
        return True  # cannot tell: say what the listing said


def file_info(path: str) -> tuple[int, int | None]:
    """``(size, mtime_ns)`` of an input: ``os.stat`` for a local file, the listing (or one HEAD) for a URL."""
    if not is_remote(path):
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns
    obj = _LISTED.get(path)
    if obj is None:
        from mdf.storage import default

        obj = _LISTED[path] = default().info(path)
    return obj.size, obj.mtime_ns


def file_size(path: str) -> int:
    return file_info(path)[0]


def _hidden(rel: Path) -> bool:
    """Under a ``_``- or ``.``-prefixed name (``_mdf/``, ``.git``): metadata, skipped as dataset readers do."""
    return any(part.startswith((".", "_")) for part in rel.parts)


def shard_ids(files: list[str]) -> list[str]:
    """Stable part-file names for ``files``, unique by construction and readable by every dataset reader.

    The name is the path relative to the files' common folder, folders joined by ``__`` and extensions dropped:
    ``data/a/cc-1.parquet, data/b/cc-1.parquet`` become ``a__cc-1, b__cc-1``. Files that differ only by
    extension (``cc.jsonl.gz``, ``cc.jsonl.zst``) keep it (``cc_jsonl_gz``). Then:

    * letters and digits of any script are kept (``日本``, ``Été``, NFC-normalised); every other run of
      characters, ``.`` included (a ``.`` would read as a schema piece ``<id>.1``), becomes ``_``;
    * a leading ``_`` or ``.`` is dropped (pyarrow, Spark and mdf's own folder reader skip such names);
    * a name over :data:`MAX_ID_BYTES` (deep folders) keeps its head and a hash;
    * a name that is not unique after all that (``a/b.parquet`` and a file named ``a__b.parquet``; ``a b`` and
      ``a_b``; ``A`` and ``a`` on a case-insensitive disk; ``x-b00001``, which a reader's piece of ``x`` may be
      named) gets a hash.

    Every hash is of the input's identity (:func:`_identity`: its absolute path, or its URL without credentials),
    never of the readable name, whose ``__`` and ``_`` may stand for several paths: two different inputs get two
    different names, and an input named twice is refused (one line, exit 2), never written over.

    The result depends only on the list of files, so ``--resume`` finds the same names; which input wrote which
    part file is kept in ``_mdf/shards.json`` (:mod:`mdf.io.lineage`).
    """
    if not files:
        return []
    keys = [_identity(f) for f in files]
    twice = [k for k, n in Counter(keys).items() if n > 1]
    if twice:
        raise RecipeError(f"input {twice[0]!r} is listed more than once; list each input file once", "reader.paths")
    names = [_as_path(f) for f in files]
    root = os.path.commonpath([os.path.dirname(f) for f in names])
    full = [os.path.relpath(f, root).replace(os.sep, "__") for f in names]
    short = []
    for rel in full:
        while rel.lower().endswith(_EXTENSIONS):
            rel = os.path.splitext(rel)[0]
        short.append(rel)
    taken = Counter(short)
    ids = [_safe(s if taken[s] == 1 else f) for s, f in zip(short, full, strict=True)]
    clash = Counter(i.casefold() for i in ids)
    out = [_fit(i, k, clash[i.casefold()] > 1 or bool(_PIECE.search(i))) for i, k in zip(ids, keys, strict=True)]
    again = Counter(i.casefold() for i in out)  # a hashed name equal to an input's own name: the full hash
    out = [_fit(i, k, True, 40) if again[i.casefold()] > 1 else i for i, k in zip(out, keys, strict=True)]
    final = Counter(i.casefold() for i in out)
    if len(final) != len(out):  # only a file named after another's 40-digit hash gets here
        same = next(i for i in out if final[i.casefold()] > 1)
        raise RecipeError(f"two inputs would write the part file {same!r}; rename one of them", "reader.paths")
    return out


def _identity(f: str) -> str:
    """What tells two inputs apart: the absolute path of a file, the URL of an object as mdf writes it down
    (without credentials, :func:`mdf.storage.redact.redact_url`), each exactly, ``a//b`` and ``a/b`` two keys."""
    return redact_url(f) if is_remote(f) else os.path.abspath(f)


def _as_path(f: str) -> str:
    """A URL as a path rooted at its scheme (``s3://b/cc/x.parquet`` -> ``/s3:/b/cc/x.parquet``), so the common
    folder of URLs in one bucket is found as for local files and the ids are the keys below it."""
    if not is_remote(f):
        return f
    scheme, _, rest = redact_url(f).partition("://")  # a password in the userinfo never names a part file
    return "/" + scheme + ":/" + rest.split("?", 1)[0].strip("/")


def _safe(name: str) -> str:
    """Letters and digits of any script, ``_`` and ``-``; never a leading ``_``, which hides the file."""
    name = _UNSAFE.sub("_", unicodedata.normalize("NFC", name)).lstrip("_")
    return name or "part"


def _fit(name: str, key: str, clashes: bool, digits: int = 12) -> str:
    """``name`` under :data:`MAX_ID_BYTES`, with a hash of ``key`` (the input's identity) when it was cut or is
    not unique. The hash follows ``-h``: a hex string after a bare ``-`` may read as a piece (``-b0123``)."""
    encoded = name.encode("utf-8")
    if not clashes and len(encoded) <= MAX_ID_BYTES:
        return name
    digest = "h" + hashlib.sha1(key.encode("utf-8", "surrogateescape")).hexdigest()[:digits]
    head = encoded[: MAX_ID_BYTES - len(digest) - 1].decode("utf-8", "ignore")  # whole characters only
    return f"{head}-{digest}"
