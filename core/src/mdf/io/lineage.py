"""Which input wrote which part file: ``<output>/_mdf/shards.json``.

A part file is named after its shard (:func:`mdf.io.sharding.shard_ids`), and that name is sanitised, cut to
a length file systems accept and given a hash where two inputs would otherwise share it, so it no longer spells
its input's path. The map written here gives the lineage back: for each shard id, the input file and the piece
of it (row groups or bytes) it covers. It is written once the output folders are claimed, before any data, in
every folder the run writes; ``--resume`` rewrites it with the same content (the ids depend only on the input).
"""

from __future__ import annotations

import json
import os
from typing import Any

from mdf import layout
from mdf.io.base import Shard
from mdf.storage.redact import redact_url

FILE = "shards.json"


def shard_map(shards: list[Shard]) -> dict[str, Any]:
    """``{"shards": [{"id", "path", "start", "stop"}, ...]}`` in the reader's order; a URL's credentials are
    left out (:func:`mdf.storage.redact.redact_url`)."""
    return {
        "format": 1,
        "shards": [{"id": s.id, "path": redact_url(s.path), "start": s.start, "stop": s.stop} for s in shards],
    }


def write_shard_map(folders: list[str], shards: list[Shard]) -> None:
    """Write :func:`shard_map` to ``<folder>/_mdf/shards.json`` of each folder, atomically."""
    body = json.dumps(shard_map(shards), ensure_ascii=False, indent=1)
    try:
        body.encode("utf-8")
    except UnicodeEncodeError:  # a file name that is not UTF-8 (os.fsdecode's surrogates): escaped, valid JSON
        body = json.dumps(shard_map(shards), indent=1)
    for folder in folders:
        meta = layout.meta_dir(folder)
        meta.mkdir(parents=True, exist_ok=True)
        tmp = meta / f"{FILE}.tmp"
        tmp.write_text(body, encoding="utf-8")
        os.replace(tmp, meta / FILE)


def read_shard_map(folder: str) -> dict[str, str]:
    """``{shard id: input path}`` of a run's output folder (empty when the run predates the map)."""
    path = layout.meta_dir(folder) / FILE
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {entry["id"]: entry["path"] for entry in data["shards"]}
