"""``mdf index info`` and ``mdf index compact``: what an index holds (from its manifest alone), and merging its
generations into one.

Compaction takes the index's lock like an ``update`` run, writes one new generation (per bucket: the keys of
every generation, sorted, the earliest generation's source id where two hold a key), swaps the manifest, and
only then deletes the old generations' files. A run reading the index while it is compacted may find them gone
and fail naming the file (exit 1); run compaction between runs.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyarrow as pa

from mdf_dedup.index import manifest as mf
from mdf_dedup.index.files import IndexFiles, open_files
from mdf_dedup.index.store import LoadedIndex, plain, write_bucket

COMPACT_RUN = {"fingerprint": "compaction", "output": "mdf index compact"}


class NoIndex(Exception):
    """There is no index (no manifest) at the path; the message says where."""


class NotCompactable(NoIndex):
    """A Bloom index: its filters keep no keys to merge (a :class:`NoIndex`, so the CLI shows it as one line)."""


def _manifest(files: IndexFiles) -> dict[str, Any]:
    return _manifest_tagged(files)[0]


def _manifest_tagged(files: IndexFiles) -> tuple[dict[str, Any], str | None]:
    manifest, tag = mf.read_manifest_tagged(files)
    if manifest is None:
        raise NoIndex(f"no index at {files.root} (no {mf.MANIFEST}); an index_mode: update run creates one")
    return manifest, tag


def info(path: str) -> dict[str, Any]:
    """Generations, keys, bytes per key, settings and the lock holder: reads the manifest and the lock only."""
    files = open_files(path)
    manifest = _manifest(files)
    gens = manifest["generations"]
    keys = sum(g["keys"] for g in gens)
    key_bytes = sum(g["key_bytes"] for g in gens)
    source_bytes = sum(g["source_bytes"] for g in gens)
    return {
        "path": files.root,
        "operator": manifest["operator"],
        "kind": manifest["settings"].get("index_kind", "exact"),
        "mdf_version": manifest["mdf_version"],
        "format": manifest["format"],
        "settings": manifest["settings"],
        "keys": keys,
        "key_bytes": key_bytes,
        "source_bytes": source_bytes,
        "key_bytes_per_key": round(key_bytes / keys, 2) if keys else 0.0,
        "source_bytes_per_key": round(source_bytes / keys, 2) if keys else 0.0,
        "generations": [
            {
                "id": g["id"],
                "created": g["created"],
                "keys": g["keys"],
                "buckets": g["buckets"],
                "key_bytes": g["key_bytes"],
                "source_bytes": g["source_bytes"],
                "run": g["run"].get("output") or f"compaction of {len(g['run'].get('compacted', []))} generations",
            }
            for g in gens
        ],
        "locked_by": mf.read_lock(files),
    }


def compact(path: str, buckets: int | None = None) -> dict[str, Any]:
    """Merge every generation into one of ``buckets`` files (default: the most any generation has)."""
    from mdf_kernels import merge_sorted_runs

    files = open_files(path)
    manifest = _manifest(files)
    if manifest["settings"].get("index_kind") == "bloom":
        raise NotCompactable(f"index {files.root} is a Bloom index: its filters keep no keys to merge, so its "
                             "generations stay as they are")  # fmt: skip
    old = manifest["generations"]
    if len(old) <= 1 and (buckets is None or (old and old[0]["buckets"] == buckets)):
        return {"generations_before": len(old), "generations_after": len(old), "keys": sum(g["keys"] for g in old)}
    mf.acquire(files, COMPACT_RUN)
    try:
        manifest, tag = _manifest_tagged(files)  # again, under the lock: as no other run will change it
        old = manifest["generations"]
        n = buckets or max(g["buckets"] for g in old)
        gen = {"id": f"g-compact-{int(time.time() * 1000)}", "buckets": n}
        entries = []
        for b in range(n):
            loaded = LoadedIndex(files, manifest, b, n, skip_run=None)
            if not len(loaded):
                continue
            runs = [np.asarray(k) for k, _, _, _ in loaded.parts]  # each sorted: a generation's file, or rows of it
            sources = pa.concat_arrays([
                plain(loaded.source_column(slot).take(pa.array(rows if rows is not None else np.arange(len(k)))))
                for slot, (k, rows, _, _) in enumerate(loaded.parts)
            ])  # fmt: skip
            # a k-way merge of the sorted files, each key's first (earlier generations come first): no sort
            starts = np.cumsum([0, *(len(r) for r in runs[:-1])])
            at = [np.arange(s, s + len(r), dtype=np.uint64) for s, r in zip(starts, runs, strict=True)]
            keys, first = merge_sorted_runs(pa.chunked_array(runs, pa.uint64()), pa.chunked_array(at, pa.uint64()))
            entries.append(write_bucket(files, gen, b, keys.to_numpy(), sources.take(first)))
        manifest["generations"] = [{
            **gen, "run": {"compacted": [g["run"] for g in old]},
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "keys": sum(e["keys"] for e in entries), "key_bytes": sum(e["key_bytes"] for e in entries),
            "source_bytes": sum(e["source_bytes"] for e in entries), "files": entries,
        }]  # fmt: skip
        mf.check(files, COMPACT_RUN)
        mf.write_manifest(files, manifest, tag)
        for g in old:
            for entry in g["files"]:
                for name in mf.gen_files(g, entry["bucket"]):
                    files.delete(name)
    finally:
        mf.release(files, COMPACT_RUN)
    return {"generations_before": len(old), "generations_after": 1, "keys": manifest["generations"][0]["keys"]}
