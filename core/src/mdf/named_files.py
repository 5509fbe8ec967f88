"""Files a recipe names besides its input (a model, a blocklist, word lists, ``estimate_from``, a dedup index),
found through the parameters' types, and what each holds when the run starts: ``--resume`` refuses a changed one.

Why through types, not a list of operators: any plugin's operator that reads a file says so where it declares the
parameter, and core finds it without knowing the operator. A parameter is such a file when its type is

* :data:`InputFile` (``Annotated[str, ReadsFile()]``: a local path or a URL), alone, in a list, a dict's values or
  ``| None``; :class:`ReadsFile` with ``extensions`` for a value that may be a folder or a glob (every file it lists
  counts; ``score_filter``'s ``estimate_from``), or with ``identity`` for a store that is not one file (a dedup
  index: what of it the run reads, without the generations the run itself adds);
* pydantic's ``FilePath`` (``bad_words_filter``'s word lists).

What is recorded per file (``run.json``, ``files``): a local file's size, modification time and SHA-256 of its
content; an object's size and last-modified time (reading a remote model whole to hash it would cost a download
on every resume; an object rewritten under its key gets a new time). A local file is read once: its digest is kept
in ``$MDF_CACHE_DIR/digests`` keyed by device, inode, size, mtime and ctime, and any write to the file changes its
ctime, which no tool can set back. A file whose content is the same but whose time changed (copied again, touched)
is the same file; one that is missing, or whose size or content differ, is refused by ``--resume`` (exit 2, the
YAML key and the file named).
"""

from __future__ import annotations

import glob as globbing
import hashlib
import os
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

_SMALL = 1 << 20  # a file under 1 MiB is hashed on every run: the cache would cost more than it saves


@dataclass(frozen=True)
class ReadsFile:
    """Marks a parameter that names a file the run reads (see the module). ``extensions``: the value may be a
    folder or glob, whose files ending so are read; ``identity(value, run)``: what of a store the run reads
    (``run``: the run's fingerprint without these files), JSON, ``None`` when there is nothing yet; ``store``: the
    value is a folder the run may also write, named so in messages (``"index"``), and checked before any work like
    an output (:func:`mdf.output_paths.check_store_path`: not where the reader lists, not in or around an output)."""

    extensions: tuple[str, ...] | None = None
    identity: Callable[[str, str], Any] | None = None
    store: str | None = None

    def __str__(self) -> str:  # what ``mdf ops`` shows for the parameter's type
        return "file path or URL"


InputFile = Annotated[str, ReadsFile()]
"""A parameter naming one file the run reads: a local path or a URL (``s3://``, ``https://``)."""


def named(cls: Any, params: Any, where: str) -> list[tuple[str, str, ReadsFile]]:
    """``(yaml key, value, marker)`` of every file-naming parameter of a component (class, validated params)."""
    out = []
    for name, field in type(params).model_fields.items():
        marker = _marker([field.annotation, *field.metadata])
        if marker is None:
            continue
        value = getattr(params, name)
        key = f"{where}.{name}"
        if isinstance(value, dict):
            out.extend((f"{key}.{k}", str(v), marker) for k, v in value.items() if v is not None)
        elif isinstance(value, list | tuple):
            out.extend((f"{key}[{i}]", str(v), marker) for i, v in enumerate(value) if v is not None)
        elif value is not None:
            out.append((key, str(value), marker))
    return out


def _marker(types_: list[Any]) -> ReadsFile | None:
    for t in types_:
        if isinstance(t, ReadsFile):
            return t
        if type(t).__name__ == "PathType" and getattr(t, "path_type", None) == "file":  # pydantic's FilePath
            return ReadsFile()
        origin, args = typing.get_origin(t), typing.get_args(t)
        if origin is typing.Annotated:
            found = _marker(list(args[1:])) or _marker([args[0]])
        else:  # X | None, list[X], dict[str, X], ...
            found = _marker(list(args)) if origin is not None else None
        if found is not None:
            return found
    return None


def _components(recipe: Any, plugins: Any) -> list[tuple[str, str, ReadsFile]]:
    """:func:`named` over the recipe's reader and operators."""
    components: list[tuple[Any, dict[str, Any], str]] = [
        (plugins.readers.get(recipe.reader.type, "reader.type"), recipe.reader.params, "reader")
    ]
    for i, stage in enumerate(recipe.stages):
        for j, spec in enumerate(stage.operators):
            components.append((plugins.operators.get(spec.name), spec.params, f"stages[{i}].operators[{j}]"))
    return [found for cls, raw, where in components for found in named(cls, cls.Params(**raw), where)]


def stores(recipe: Any, plugins: Any) -> list[tuple[str, str, str]]:
    """``(yaml key, value, what)`` of every parameter naming a store the run may write (a dedup index)."""
    return [(key, value, marker.store) for key, value, marker in _components(recipe, plugins) if marker.store]


def identities(plan: Any, run: str) -> dict[str, Any]:
    """``{yaml key: {path: identity}}`` of every file the plan's components name (``run``: the fingerprint)."""
    out: dict[str, Any] = {}
    for key, value, marker in _components(plan.recipe, plan.plugins):
        if marker.identity is not None:
            out[key] = {value: marker.identity(value, run)}
        else:
            out[key] = {path: file_identity(path) for path in _files(value, key, marker)}
    return out


def _files(value: str, key: str, marker: ReadsFile) -> list[str]:
    """The files a value names: itself, or those a folder or glob lists (``marker.extensions``; any folder)."""
    from mdf.storage import is_remote

    local = os.path.expanduser(value)
    # a URL with extensions is a prefix, a glob of objects or one object: listed; a local one only when it needs to be
    listed = marker.extensions is not None if is_remote(value) else os.path.isdir(local) or globbing.has_magic(local)
    if not listed:
        return [value]
    from mdf.io.sharding import expand_paths

    try:
        return expand_paths([value], key, marker.extensions)
    except Exception:  # nothing there now: recorded as missing, compared as such
        return [value]


def file_identity(path: str) -> dict[str, Any] | None:
    """Size, mtime and (local) SHA-256 of ``path``; ``None`` when it is missing."""
    from mdf.storage import StorageError, is_remote

    if is_remote(path):
        from mdf.io.sharding import file_info

        try:
            size, mtime = file_info(path)
        except (OSError, StorageError):
            return None
        return {"size": size, "mtime_ns": mtime}
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest(path, st)}


def digest(path: str, st: os.stat_result | None = None) -> str:
    """SHA-256 of a file's content, read once per version of the file on this machine (see the module)."""
    st = st or os.stat(path)
    if st.st_size < _SMALL:
        return _hash(path)
    stamp = f"{os.path.realpath(path)}\0{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}"
    folder = Path(os.environ.get("MDF_CACHE_DIR") or Path.home() / ".cache" / "mdf") / "digests"
    kept = folder / hashlib.sha256(stamp.encode()).hexdigest()[:32]
    try:
        return kept.read_text().strip()
    except OSError:
        pass
    value = _hash(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
        tmp.write_text(value)
        os.replace(tmp, kept)
    except OSError:  # a read-only home: hashed again next time
        pass
    return value


def _hash(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def changed(before: dict[str, Any], now: dict[str, Any]) -> str | None:
    """The first named file that differs between two :func:`identities`, as ``key: what``; ``None`` if none."""
    for key in sorted(set(before) | set(now)):
        old, new = before.get(key) or {}, now.get(key) or {}
        for path in sorted(set(old) | set(new)):
            a, b = old.get(path), new.get(path)
            if path not in new:
                return f"{key}: '{path}' is no longer named or listed"
            if path not in old:
                return f"{key}: '{path}' is new since the run began"
            why = _differs(a, b)
            if why is not None:
                return f"{key}: '{path}' {why}"
    return None


def _differs(a: Any, b: Any) -> str | None:
    if a == b:
        return None
    if not (isinstance(a, dict) and isinstance(b, dict)) or not ({"size"} <= a.keys() and {"size"} <= b.keys()):
        if b is None:
            return "is missing now"
        return "changed since the run began"  # a store's identity (an index's generations)
    if a["size"] != b["size"]:
        return f"changed since the run began ({a['size']:,} -> {b['size']:,} bytes)"
    if "sha256" in a and "sha256" in b:
        return None if a["sha256"] == b["sha256"] else "changed since the run began (same size, other content)"
    return None if a.get("mtime_ns") == b.get("mtime_ns") else "changed since the run began (rewritten)"
