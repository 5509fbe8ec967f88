"""Where a run may write: the checks on ``writer.path`` and ``rejected.path`` made before any folder is touched.

An output folder is what ``--overwrite`` replaces and what the next run's reader may list, so a wrong one loses
data: ``writer: {path: .}`` would have ``--overwrite`` delete the working directory with the recipe in it, a
writer at the input folder replaces the input, and an output inside a folder the reader lists is read again by
the next run (2,000 rows become 4,000). Every check compares *resolved* paths (``realpath``: ``..``, symlinks),
never the text the recipe wrote, so ``x/../out`` and ``out/rej`` are seen to overlap. Each refusal is exit 2
before any work, naming the YAML key, its value, and the fix.

An ``s3://bucket/prefix`` output is written through :mod:`mdf.output.remote` (staged, then published); it must
name a prefix below the bucket (``--overwrite`` replaces what is there) and not overlap the other output or an
input. Every other scheme (``https://`` is read only; ``gs://`` and the like are not written yet) is refused:
the writers would have taken ``gs://bucket/out`` for a local folder ``gs:/bucket/out`` and said nothing.
"""

from __future__ import annotations

import errno
import fnmatch
import glob
import os
from pathlib import Path
from typing import Any

from mdf.errors import RecipeError
from mdf.named_files import stores

NAME_MAX = 255  # bytes in one file name (ext4, xfs, btrfs, tmpfs)
PATH_MAX = 4096  # bytes in a path the kernel accepts


def output_dirs(recipe: Any) -> list[tuple[str, str]]:
    """``(role, path)`` of every folder the recipe writes: the writer's and the rejected writer's."""
    out = []
    for role, spec in (("writer", recipe.writer), ("rejected", recipe.rejected)):
        if spec is not None and spec.type != "discard" and spec.params.get("path"):
            out.append((role, str(spec.params["path"])))
    return out


def resolved(path: str) -> Path:
    """The folder a path names once ``..`` and symlinks are followed (the part that exists so far)."""
    return Path(os.path.realpath(path))


def _remote(path: str) -> bool:
    return "://" in path


def _within(inner: Path, outer: Path) -> bool:
    """``inner`` is ``outer`` or below it."""
    return inner == outer or outer in inner.parents


def check_output_paths(recipe: Any) -> None:
    """Exit 2 before any work when an output path is empty, a file, not writable, the working directory or above
    it, holds the recipe, is (or holds, or lies where the reader lists) an input, or overlaps the other output."""
    for role, spec in (("writer", recipe.writer), ("rejected", recipe.rejected)):
        if spec is not None and spec.type != "discard" and "path" in spec.params:
            value = spec.params["path"]
            if value is None or not str(value).strip():
                raise RecipeError(f"'{value or ''}' is empty; name the output folder, e.g. out/", f"{role}.path")
    _check_urls(recipe)
    dirs = [(role, path) for role, path in output_dirs(recipe) if not _remote(path)]
    for role, path in dirs:
        _check_folder(role, path)
        _check_place(role, path, recipe)
    if len(dirs) == 2:
        (_, w), (_, r) = dirs
        a, b = resolved(w), resolved(r)
        if _within(a, b) or _within(b, a):
            raise RecipeError(
                f"'{r}' ({b}) overlaps writer.path '{w}' ({a}); rejected rows would be read as output; "
                "give rejected its own folder beside the writer's",
                "rejected.path",
            )


def _check_urls(recipe: Any) -> None:
    """An output URL is ``s3://bucket/prefix``, apart from the other output and from every input URL."""
    urls = [(role, path) for role, path in output_dirs(recipe) if _remote(path)]
    for role, path in urls:
        scheme = path.split("://", 1)[0].lower()
        if scheme not in ("s3", "s3a"):
            raise RecipeError(
                f"'{path}': mdf writes only local folders and s3:// prefixes ({scheme}:// is "
                f"{'read only' if scheme in ('http', 'https') else 'not written yet'}); write to s3:// or a local "
                "folder and copy it up",
                f"{role}.path",
            )
        bucket, _, prefix = path.split("://", 1)[1].partition("/")
        if not bucket or not prefix.strip("/"):
            raise RecipeError(
                f"'{path}' names a whole bucket; --overwrite would replace all of it; name a prefix, e.g. "
                f"s3://{bucket or 'bucket'}/out",
                f"{role}.path",
            )
        from mdf.output.remote import check_writable  # the S3 layer: imported for an s3:// output only

        check_writable(path, role)
    keys = [(role, path, _key(path)) for role, path in urls]
    if len(keys) == 2 and (_under(keys[0][2], keys[1][2]) or _under(keys[1][2], keys[0][2])):
        raise RecipeError(
            f"'{keys[1][1]}' overlaps writer.path '{keys[0][1]}'; rejected rows would be read as output; give "
            "rejected its own prefix beside the writer's",
            "rejected.path",
        )
    paths = recipe.reader.params.get("paths") if recipe.reader is not None else None
    for role, path, key in keys:
        for i, pattern in enumerate(paths if isinstance(paths, list) else []):
            if not isinstance(pattern, str) or not _remote(pattern):
                continue
            wild = min((k for k in (pattern.find(c) for c in "*?[") if k >= 0), default=-1)
            root = _key(pattern if wild < 0 else pattern[:wild].rsplit("/", 1)[0])
            lists_below = wild < 0 or "**" in pattern  # a prefix or a recursive glob lists the output's parts
            if _under(root, key) or (lists_below and _under(key, root)):
                raise RecipeError(
                    f"'{path}' overlaps the input '{pattern}' (reader.paths[{i}]); writing there replaces the input "
                    "or the next run reads the output as input; name a new prefix, e.g. s3://bucket/out",
                    f"{role}.path",
                )


def _key(url: str) -> str:
    """``s3a://b/x/`` -> ``s3://b/x``: the form two URLs are compared in."""
    scheme, _, rest = url.partition("://")
    return ("s3" if scheme.lower() == "s3a" else scheme.lower()) + "://" + rest.rstrip("/")


def _under(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer + "/")


def _check_folder(role: str, path: str) -> None:
    p, key = Path(path), f"{role}.path"
    shown = path if len(path) <= 120 else f"{path[:100]}... ({len(path):,} characters)"
    if any(len(os.fsencode(part)) > NAME_MAX for part in p.parts) or len(os.fsencode(p.absolute())) >= PATH_MAX:
        raise RecipeError(
            f"'{shown}' is too long for the file system (a name over {NAME_MAX} bytes or a path over {PATH_MAX:,}); "
            "choose a shorter folder",
            key,
        )
    try:
        os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RecipeError(
                f"'{shown}' goes round a loop of symbolic links; fix the link or write elsewhere", key
            ) from None
    if p.exists() and not p.is_dir():
        raise RecipeError(f"'{path}' is a file; it must name a folder for the part files; choose one", key)
    probe = p
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise RecipeError(f"'{probe}' (in '{path}') is a file, so the folder cannot be created", key)
    if not os.access(probe, os.W_OK | os.X_OK):
        raise RecipeError(f"cannot write to '{probe}' (permission denied); choose a folder you can write", key)


def _check_place(role: str, path: str, recipe: Any) -> None:
    """The working directory, the recipe's folder and every input stay outside the output."""
    out = resolved(path)
    cwd = resolved(os.getcwd())
    fix = "name a new folder for the output, e.g. out/"
    if _within(cwd, out):
        what = "is the working directory" if out == cwd else f"is above the working directory {cwd}"
        raise RecipeError(f"'{path}' {what}; --overwrite would replace all of it; {fix}", f"{role}.path")
    source = getattr(recipe, "source", None)
    if source and _within(resolved(str(source)), out):
        raise RecipeError(f"'{path}' holds the recipe {source}; --overwrite would delete it; {fix}", f"{role}.path")
    found = _input_place(out, recipe)
    if found is not None:
        what, where = found
        if what == "is inside":
            raise RecipeError(
                f"'{path}' is inside {where}; the next run would read this output as input; {fix} outside it",
                f"{role}.path",
            )
        raise RecipeError(f"'{path}' {what} {where}; writing there replaces the input; {fix}", f"{role}.path")


def _input_place(out: Path, recipe: Any) -> tuple[str, str] | None:
    """How the resolved folder ``out`` meets a local input: ``("is" | "holds" | "is inside", "the input '...'
    (reader.paths[i])")``, "is inside" only where the reader lists files in it; ``None`` when apart."""
    paths = recipe.reader.params.get("paths") if recipe.reader is not None else None
    for i, pattern in enumerate(paths if isinstance(paths, list) else []):
        if not isinstance(pattern, str) or _remote(pattern):
            continue
        root, rest = _split_glob(os.path.expanduser(pattern))
        where = f"the input '{pattern}' (reader.paths[{i}])"
        if _within(root, out):
            return ("is" if root == out else "holds"), where
        if root in out.parents and _lists(rest, out.relative_to(root).parts, root.is_dir() and not rest):
            return "is inside", where
    return None


def check_stores(recipe: Any, plugins: Any) -> None:
    """:func:`check_store_path` of every store the recipe's components name (a dedup index); run when the recipe
    is loaded, before the plugins' own checks of what is in the store."""
    for key, path, what in stores(recipe, plugins):
        check_store_path(key, path, what, recipe)


def check_store_path(key: str, path: str, what: str, recipe: Any) -> None:
    """A folder the run reads and may write besides its outputs (a dedup ``index``, :class:`mdf.ReadsFile`'s
    ``store``) is apart from the outputs and from where the reader lists: inside ``writer.path`` it would make the
    output no dataset (and be the user's files to ``--overwrite``), at or in an input it would be read as data.
    Exit 2 naming ``key``, before any work."""
    fix = f"keep the {what} in a folder of its own"
    if _remote(path):
        mine = _key(path)
        for role, out in output_dirs(recipe):
            if _remote(out) and (_under(mine, _key(out)) or _under(_key(out), mine)):
                raise RecipeError(f"'{path}' overlaps {role}.path '{out}'; {fix}", key)
        return
    place = resolved(path)
    for role, out in output_dirs(recipe):
        if _remote(out):
            continue
        folder = resolved(out)
        if _within(place, folder) or _within(folder, place):
            how = "is" if place == folder else ("is inside" if _within(place, folder) else "holds")
            raise RecipeError(
                f"'{path}' {how} {role}.path '{out}'; the output would hold the {what} and no longer read as a "
                f"dataset; {fix}",
                key,
            )
    found = _input_place(place, recipe)
    if found is not None:
        raise RecipeError(f"'{path}' {found[0]} {found[1]}; the reader would read the {what} as data; {fix}", key)


def check_inputs(outputs: list[tuple[str, str]], files: list[str]) -> None:
    """Exit 2 when an input file (followed through symlinks) lies in an output folder: the glob check of
    :func:`check_output_paths` sees the recipe's patterns, this one the files they listed."""
    folders = {os.path.dirname(os.path.realpath(f)) for f in files if not _remote(f)}
    for role, path in outputs:
        if _remote(path):
            continue
        out = resolved(path)
        for folder in folders:
            if _within(Path(folder), out):
                raise RecipeError(
                    f"'{path}' ({out}) holds the input folder {folder}; writing there replaces the input; name a "
                    "new folder for the output, e.g. out/",
                    f"{role}.path",
                )


def _split_glob(pattern: str) -> tuple[Path, list[str]]:
    """``data/**/x*.parquet`` -> (resolved ``data``, ``["**", "x*.parquet"]``): the literal folder and the rest."""
    parts = Path(pattern).parts
    for k, part in enumerate(parts):
        if glob.has_magic(part):
            return resolved(os.path.join(*parts[:k]) if k else "."), list(parts[k:])
    return resolved(pattern), []


def _lists(rest: list[str], rel: tuple[str, ...], folder: bool) -> bool:
    """Whether a reader listing ``root/<rest>`` (or the whole folder ``root``) can list files under ``root/<rel>``."""
    if folder:
        return True  # a folder is listed recursively
    for k, part in enumerate(rest):
        if part == "**":
            return True
        if k >= len(rel):
            return True  # the pattern goes deeper than the output: files in it can match
        if not fnmatch.fnmatchcase(rel[k], part):
            return False
    return False  # the pattern stops at the output's own level or above: it lists no file inside it
