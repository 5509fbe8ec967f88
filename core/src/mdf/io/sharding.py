"""Turn the recipe's path globs into files and stable shard ids."""

from __future__ import annotations

import glob
import os
import re
from collections import Counter
from pathlib import Path

from mdf.errors import RecipeError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_EXTENSIONS = (".parquet", ".jsonl", ".json", ".ndjson", ".gz", ".zst", ".zstd", ".warc", ".tar")


def expand_paths(
    patterns: list[str], yaml_path: str = "reader.paths", extensions: tuple[str, ...] | None = None
) -> list[str]:
    """Expand globs (``**`` allowed) and directories to a sorted, de-duplicated list of files.

    A directory contributes its files whose names end with one of ``extensions`` (case-insensitive; all files
    when ``None``), so a README or a ``.csv`` beside the data is not read as data. A glob is the user's own
    choice and is taken as written. Raises :class:`RecipeError` naming the pattern when it matches nothing,
    before any work is done.
    """
    files: list[str] = []
    for i, pattern in enumerate(patterns):
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
            matched = sorted(f for f in glob.glob(p, recursive=True) if os.path.isfile(f))
        if not matched:
            raise RecipeError(
                f"no input file matches {pattern!r} (cwd {os.getcwd()}); fix the path or glob",
                f"{yaml_path}[{i}]",
            )
        files.extend(matched)
    return sorted(dict.fromkeys(os.path.abspath(f) for f in files))


def _hidden(rel: Path) -> bool:
    """Under a ``_``- or ``.``-prefixed name (``_mdf/``, ``.git``): metadata, skipped as dataset readers do."""
    return any(part.startswith((".", "_")) for part in rel.parts)


def shard_ids(files: list[str]) -> list[str]:
    """Stable, file-system-safe names: the path relative to the files' common folder, extensions dropped.

    ``data/a/cc-1.parquet, data/b/cc-1.parquet`` become ``a__cc-1, b__cc-1`` so outputs never collide. Files
    that differ only by extension (``cc.jsonl.gz``, ``cc.jsonl.zst``) keep it (``cc_jsonl_gz``): with the
    extensions dropped they would write the same part file, and the second would replace the first's rows.
    """
    if not files:
        return []
    root = os.path.commonpath([os.path.dirname(f) for f in files])
    full = [os.path.relpath(f, root).replace(os.sep, "__") for f in files]
    short = []
    for rel in full:
        while rel.lower().endswith(_EXTENSIONS):
            rel = os.path.splitext(rel)[0]
        short.append(rel)
    taken = Counter(short)
    ids = [s if taken[s] == 1 else f.replace(".", "_") for s, f in zip(short, full, strict=True)]
    return [_UNSAFE.sub("_", i) for i in ids]
