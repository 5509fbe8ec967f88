"""Entry point ``tokens``: registers ``tokenize``, ``token_stats``, and the ``megatron`` writer and reader.

Everything is registered by reference (``registry.add_lazy``), so loading the plugin imports none of its modules: a
run that names none of them pays nothing for the plugin.
"""

from __future__ import annotations

import os
from typing import Any

from mdf import RecipeError, Registry, hookimpl


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add_lazy("tokenize", "mdf_tokens.ops.tokenize:Tokenize")
    registry.add_lazy("token_stats", "mdf_tokens.ops.stats:TokenStats")


@hookimpl
def mdf_register_writers(registry: Registry) -> None:
    registry.add_lazy("megatron", "mdf_tokens.megatron.writer:MegatronWriter")


@hookimpl
def mdf_register_readers(registry: Registry) -> None:
    registry.add_lazy("megatron", "mdf_tokens.megatron.reader:MegatronReader")


@hookimpl
def mdf_recipe_loaded(recipe: Any) -> None:
    """Refuse what cannot work before any work: rejected rows as Megatron files (they carry no ids), and a Megatron
    output inside a folder a ``megatron`` reader's source lists (the next run would mix the output back in)."""
    if recipe.rejected is not None and recipe.rejected.type == "megatron":
        raise RecipeError(
            "rejected rows have no token ids to write as Megatron files; write them as parquet or jsonl",
            "rejected.type",
        )
    if recipe.reader.type != "megatron" or recipe.writer.type != "megatron":
        return
    out = str(recipe.writer.params.get("path") or "")
    if not out or "://" in out:
        return
    out_real = os.path.realpath(out)
    params = recipe.reader.params
    for i, source in enumerate(params.get("sources") or [{"paths": params.get("paths") or []}]):
        for pattern in source.get("paths", []) if isinstance(source, dict) else []:
            root = _literal_root(str(pattern))
            if root and (out_real == root or out_real.startswith(root + os.sep)):
                where = f"reader.sources[{i}].paths" if params.get("sources") else "reader.paths"
                raise RecipeError(
                    f"'{out}' lies inside the input '{pattern}' ({where}); the next run would read this output "
                    "as input; write it outside",
                    "writer.path",
                )


def _literal_root(pattern: str) -> str | None:
    """The folder a local pattern lists recursively (a folder, or the part before ``**``), resolved; ``None`` for a
    file or a one-level glob, which cannot list files of a folder below them."""
    if "://" in pattern:
        return None
    p = os.path.expanduser(pattern)
    wild = min((i for i in (p.find(c) for c in "*?[") if i >= 0), default=-1)
    if wild < 0:
        return os.path.realpath(p) if os.path.isdir(p) else None
    if "**" not in p:
        return None
    return os.path.realpath(p[:wild].rsplit(os.sep, 1)[0] or ".")
