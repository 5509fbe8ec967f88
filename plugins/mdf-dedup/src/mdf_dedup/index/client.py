"""The operator side of the index: the ``index*`` parameters and :meth:`mdf.Deduplicator.earlier`.

Every key of a batch goes to its bucket in one request (:class:`~mdf_dedup.index.state.IndexState.visit`):
the bucket answers where the index holds it and, in ``update`` mode, remembers the keys this run claimed
first. Only for rows the index rejects, and only when rejected rows are written, a second request fetches the
earlier rows' source ids.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

import numpy as np
import pyarrow as pa
from pydantic import Field, model_validator

import mdf.storage
from mdf import DedupParams, MdfError, ReadsFile, RecipeError
from mdf_dedup.index import manifest as mf
from mdf_dedup.index.files import index_root, open_files
from mdf_dedup.index.state import IndexState


def index_identity(value: str, run: str) -> Any:
    """What of the index at ``value`` a run reads (:class:`mdf.ReadsFile`): each generation but those the run
    ``run`` (its fingerprint) added itself, so ``--resume`` refuses an index another run added to, or compacted,
    since the run began (none while there is no index yet: the same as an index holding only the run's own)."""
    manifest = mf.read_manifest(open_files(value))
    if manifest is None:
        return []
    gens = [g for g in manifest.get("generations", []) if (g.get("run") or {}).get("fingerprint") != run]
    return [[g.get("id"), g.get("keys"), g.get("key_bytes"), g.get("source_bytes")] for g in gens]


class IndexParams(DedupParams):
    """:class:`mdf.DedupParams` plus the persistent index."""

    index: Annotated[str | None, ReadsFile(identity=index_identity, store="index")] = Field(
        None, description="folder or s3:// prefix of a persistent index of earlier runs' keys: rows whose key it "
        "holds are rejected as duplicate_of_index (created by the first index_mode: update run; read mode also "
        "reads any URL the reader does)",
    )  # fmt: skip
    index_mode: Literal["read", "update"] = Field(
        "read", description="read: only consult the index; update: when the run succeeds, add the keys it kept"
    )
    index_source: str | None = Field(
        None, description="column identifying a row (e.g. url): stored per key, shown in rejected rows' _duplicate_of"
    )

    @model_validator(mode="after")
    def _index_mode(self) -> IndexParams:
        if self.index is not None and self.mode != "streaming":
            raise ValueError("index works in mode: streaming; remove index or mode: cluster")
        if self.index is not None and getattr(self, "verify", False):
            raise ValueError("index does not work with verify; remove one of them")
        return self


class IndexedDedup:
    """Mixin for a :class:`mdf.Deduplicator` whose ``Params`` subclass :class:`IndexParams`; the operator says
    which of its settings decide its keys (:meth:`index_settings`)."""

    params: Any
    state: Any
    namespace: str
    name: str
    keep_rejected: bool

    def index_settings(self) -> dict[str, Any]:
        raise NotImplementedError

    def _conf(self) -> dict[str, Any]:
        p = self.params
        conf = {"path": index_root(p.index), "mode": p.index_mode, "operator": self.name,
                "settings": self.index_settings(), "buckets": len(self.state.buckets),
                "run": dict(getattr(self.state, "run", {}) or {})}  # fmt: skip
        if mdf.storage.is_remote(p.index):  # a Ray bucket's process has not read the recipe's storage: block
            conf["storage"] = mdf.storage.default().settings
        return conf

    def earlier(
        self, batch: pa.RecordBatch, rows: np.ndarray, keys: np.ndarray, valid: np.ndarray, claimed: np.ndarray
    ) -> tuple[np.ndarray, pa.Array] | None:
        p = self.params
        if p.index is None:
            return None
        n = batch.num_rows
        k = len(keys) // n
        hit_rows = np.zeros(n, dtype=bool)
        sel = np.flatnonzero(valid)
        if not len(sel):
            return hit_rows, pa.nulls(n, pa.string())
        conf = self._conf()
        kv = keys[sel]
        arrays: tuple[Any, ...] = (kv, claimed[sel])
        if p.index_mode == "update":  # each key's row source id, as indices into the batch's (no string copied)
            arrays = (*arrays, pa.DictionaryArray.from_arrays(pa.array(sel // k, pa.int32()), self._sources(batch)))
        bloom = conf["settings"].get("index_kind") == "bloom"
        ns = f"{self.namespace}/{'bloom_index' if bloom else 'index'}"  # the report's key state says which ran
        pieces = _asked(self.state, ns, "visit", kv, arrays, conf)
        hit = np.flatnonzero(self.state.gather(pieces, np.zeros(len(kv), dtype=bool)))
        if not len(hit):
            return hit_rows, pa.nulls(n, pa.string())
        row_of_hit = sel[hit] // k
        hit_rows[row_of_hit] = True
        if not self.keep_rejected or bloom:  # a Bloom filter keeps no source ids
            return hit_rows, pa.nulls(n, pa.string())
        first_rows, first = np.unique(row_of_hit, return_index=True)  # each row's first key in the index
        ask_keys = kv[hit[first]]
        pieces = _asked(self.state, ns, "source_of", ask_keys, (ask_keys,), conf)
        found = _in_order(pieces, len(ask_keys))
        at = np.zeros(n, dtype=np.int64)
        at[first_rows] = np.arange(len(first_rows))
        return hit_rows, found.take(pa.array(at, mask=~hit_rows))

    def _sources(self, batch: pa.RecordBatch) -> pa.Array:
        column = self.params.index_source
        if column is None:
            return pa.nulls(batch.num_rows, pa.string())
        values = batch.column(column)
        return values if values.type == pa.string() else values.cast(pa.string())

    def check_index(self, path: str) -> None:
        """Before any work: refuse (exit 2) an index made with other settings, or one another run is updating."""
        p = self.params
        if p.index is None:
            return
        files = open_files(p.index)
        if not files.remote and os.path.exists(files.root) and not os.path.isdir(files.root):
            raise RecipeError(f"'{p.index}' is a file; an index is a folder (or an s3:// prefix): name a new folder, "
                              "or the folder of an index", f"{path}.index")  # fmt: skip
        if p.index_mode == "update" and not files.writable:
            raise RecipeError(
                f"{p.index}: {files.scheme}:// is read only; index_mode: update writes an index to s3:// or a local "
                "folder (use index_mode: read)", f"{path}.index",
            )  # fmt: skip
        manifest = mf.read_manifest(files)
        if manifest is None and p.index_mode == "read":
            raise RecipeError(
                f"no index at {files.root} (no {mf.MANIFEST}); build it with index_mode: update first", f"{path}.index"
            )
        if manifest is None and p.index_mode == "update":
            others = mf.strangers(files)
            if others:
                shown = ", ".join(repr(n) for n in others[:3]) + (f" and {len(others) - 3} more" if others[3:] else "")
                raise RecipeError(
                    f"index {files.root} has no {mf.MANIFEST} but holds {shown}: a lost manifest, or not an index; "
                    f"a new index here would start over without them: restore {mf.MANIFEST}, or name an empty or "
                    "new folder", f"{path}.index",
                )  # fmt: skip
        if manifest is not None:
            diff = mf.difference(manifest, self.name, self.index_settings())
            if diff:
                raise RecipeError(f"index {files.root}: {diff}; use an index made with these settings", f"{path}.index")
        holder = mf.read_lock(files) if p.index_mode == "update" else None
        if holder is not None and holder.get("pid") != os.getpid() and mf.holder_alive(holder):
            raise RecipeError(mf.describe(files, holder), f"{path}.index")


def _asked(state: Any, namespace: str, method: str, route: np.ndarray, arrays: tuple[Any, ...], conf: Any) -> Any:
    """An :class:`IndexState` request; an error a Ray bucket actor raised (a damaged generation, a
    :class:`mdf.storage.StorageError` of the index's object store) comes out as that error itself. Ray wraps it
    in a ``RayTaskError`` whose text is the actor's whole traceback, and the run's one-line error repeated it;
    the wrapper stays the ``__cause__``, so the run's log still has the traceback."""
    try:
        return state.request(IndexState, namespace, method, route, arrays, conf)
    except Exception as exc:
        cause = getattr(exc, "cause", None)  # ray.exceptions.RayTaskError.cause: what the actor raised
        if isinstance(cause, MdfError) and cause is not exc:
            raise cause from exc
        raise


def _in_order(pieces: list[tuple[np.ndarray, pa.Array]], n: int) -> pa.Array:
    """Per-bucket Arrow results put back in request order."""
    ix = np.concatenate([i for i, _ in pieces]) if pieces else np.zeros(0, dtype=np.int64)
    values = pa.concat_arrays([v for _, v in pieces]) if pieces else pa.array([], pa.string())
    order = np.empty(n, dtype=np.int64)
    order[ix] = np.arange(len(ix))
    return values.take(pa.array(order))
