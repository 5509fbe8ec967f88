"""``dedup_index``: the bucket-side half of an index (a :class:`mdf.StateType`; core knows nothing of it).

Per bucket and deduplicator: the index keys this bucket needs (:class:`~mdf_dedup.index.store.LoadedIndex`,
loaded on the first request), and in ``update`` mode the keys this run claimed that the index lacks, with the
source id of the row that claimed each. Those pending keys are pickled with the bucket's snapshot, so a
``--resume`` publishes what the whole run claimed; a retried batch (or a shard re-run after a resume) adds the
same keys again, for the same rows (claims are idempotent per row), and the bucket writes each key once.

When the run has succeeded, :meth:`IndexState.finish` writes this bucket's files of the run's generation and
:meth:`IndexState.commit` (driver) adds the generation to the manifest and releases the lock. A run already in
the manifest (a resume of a run that had published) publishes nothing. The run's last snapshot is taken between
the two (:meth:`mdf.state.checkpoint.Checkpoint.save`): it holds what finish wrote instead of the keys, and a
resume from it checks those files and commits them.

The pending keys stay as the batches gave them, unsorted. :meth:`IndexState.finish` sorts them all at once with
``mdf_kernels.sort_unique_pairs`` (split by the keys' top bits into parts that are sorted side by side, in
cache) and keeps each key's first row, so the files are the ones one stable sort wrote. Timed in ``update`` runs
of the MinHash benchmark at 1 M rows (7.5 M new band keys in 62 batches):
- before, each batch was sorted on a thread of the bucket's own as it came (numpy's timsort), and the sorted
  runs merged after the run (``mdf_kernels.merge_sorted_runs``). The thread's 0.56-0.60 s of CPU competed with
  the run: the run up to its last step took ~0.4 s longer than a ``read`` run. The merge then took 0.2-0.37 s,
  and the last snapshot, which pickled every pending key, 0.3-0.4 s;
- now the one sort takes 0.25-0.38 s, the run up to its last step about as long as a ``read`` run, and the last
  snapshot holds no keys (it is taken after :meth:`IndexState.finish`). At 2 M rows (15 M keys) the sort took
  0.34-0.42 s once it wrote its outputs directly (0.73-1.3 s before: the pages it touched first).
A key's source id travels through the sort as a number among all the batches' ids (numpy, ``uint32`` while
they fit), not as an Arrow dictionary array: the sort and :meth:`IndexState._decoded` move plain integers.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

import numpy as np
import pyarrow as pa

from mdf import OperatorError, StateType, as_numpy
from mdf_dedup.index import manifest as mf
from mdf_dedup.index.bloom import LoadedBloom, filter_file, write_bloom
from mdf_dedup.index.files import open_files
from mdf_dedup.index.store import LoadedIndex, write_bucket


def _check_written(files: Any, gen: dict[str, Any], entry: dict[str, Any] | None) -> None:
    """The files a finished bucket wrote are there with their sizes, or one line naming the first that is not
    (the keys are no longer in the snapshot: only another run can write them again)."""
    if entry is None:
        return
    names = mf.gen_files(gen, entry["bucket"])
    sizes = (entry["key_bytes"], entry["source_bytes"])
    sums = (entry.get("key_xxh3"), entry.get("source_xxh3"))
    if "bits" in entry:  # a Bloom generation: one filter file, no sources
        names, sizes, sums = (filter_file(gen, entry["bucket"]),), (entry["key_bytes"],), (entry.get("key_xxh3"),)
    for name, expected, checksum in zip(names, sizes, sums, strict=True):
        size = files.size(name)
        if size != expected:
            raise OperatorError(
                f"index generation file {files.path(name)} written by this run is "
                f"{'missing' if size is None else f'{size} bytes, not {expected}'}; "
                "run the recipe again with --overwrite (not --resume) to write it again"
            )
        files.verify(name, checksum)


class IndexState(StateType):
    name = "dedup_index"

    def __init__(self) -> None:
        self.conf: dict[str, Any] | None = None
        self.bucket = 0
        self.loaded: LoadedIndex | LoadedBloom | None = None
        # a batch's keys to add, each key with its row's number among all the batches' ids (``ids``), unsorted
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []
        self.ids: list[pa.Array] = []
        self.added = [0, 0]  # keys added, their bytes
        self.storage: Any = None  # the recipe's storage: settings (object storage), never snapshotted
        self.finished: Any = None  # what finish wrote and returned: the run's last snapshot holds this, not keys

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["loaded"] = None  # memory-mapped files: reloaded after a restore, never copied into a snapshot
        state["storage"] = None  # keys to object storage stay out of the snapshot; the next request brings them
        return state

    def _files(self) -> Any:
        assert self.conf is not None
        return open_files(self.conf["path"], self.storage)

    def _index(self, keys: np.ndarray, conf: dict[str, Any]) -> LoadedIndex | LoadedBloom:
        if self.loaded is None:
            self.conf = {k: v for k, v in conf.items() if k != "storage"}
            self.storage = conf.get("storage")
            self.bucket = int(keys[0] % np.uint64(conf["buckets"]))  # every key routed here has this remainder
            files = self._files()
            manifest = mf.read_manifest(files) or mf.new_manifest(conf["operator"], conf["settings"])
            diff = mf.difference(manifest, conf["operator"], conf["settings"])
            if diff:
                raise OperatorError(f"index {files.root}: {diff}; use an index made with these settings")
            if conf["mode"] == "update":
                try:
                    mf.acquire(files, conf["run"])
                except mf.IndexBusy as exc:
                    raise OperatorError(str(exc)) from None
                if files.remote:  # a failed run's object lock goes with its state, not ttl_s later
                    from mdf_dedup.index.objects import release_held

                    weakref.finalize(self, release_held, files.root, dict(conf["run"]))
            kind = LoadedBloom if conf["settings"].get("index_kind") == "bloom" else LoadedIndex
            self.loaded = kind(files, manifest, self.bucket, conf["buckets"], conf["run"])
        return self.loaded

    def visit(self, keys: np.ndarray, claimed: np.ndarray, *rest: Any) -> np.ndarray:
        """Per key, whether the index holds it; in ``update`` mode (``rest`` = sources, conf) remember the
        claimed keys it lacks."""
        conf = rest[-1]
        held = self._index(keys, conf).contains(keys)
        if conf["mode"] == "update":
            add = np.flatnonzero(claimed & ~held)
            if len(add):
                sources = rest[0]  # one id a key: a dictionary array over the batch's ids
                base = sum(len(i) for i in self.ids)
                wide = np.uint32 if base + len(sources.dictionary) < 1 << 32 else np.uint64
                rows = as_numpy(sources.indices)[add].astype(wide) + wide(base)
                self.ids.append(sources.dictionary)
                self.added[0] += len(add)
                self.added[1] += keys.itemsize * len(add) + rows.nbytes
                self.pending.append((keys[add], rows))
        return held

    def source_of(self, keys: np.ndarray, conf: dict[str, Any]) -> pa.Array:
        """The source id of the earlier row behind each key (every one a hit of :meth:`visit`)."""
        loaded = self._index(keys, conf)
        assert isinstance(loaded, LoadedIndex)  # a Bloom index keeps no source ids: the client does not ask
        return loaded.sources(loaded.locate(keys))

    def stats(self) -> tuple[int, int]:
        """Keys loaded from the index (exact: the lookup directory, under a byte a key, the keys being
        memory-mapped, or 16 bytes a key when several generations are merged; bloom: the filters' bytes)
        plus the keys this run will add."""
        n = self.added[0] + (len(self.loaded) if self.loaded is not None else 0)
        held = self.loaded.memory_bytes() if self.loaded is not None else 0
        return n, self.added[1] + sum(i.nbytes for i in self.ids) + held

    def finish(self, run: dict[str, Any]) -> Any:
        conf = self.conf
        if conf is None or conf["mode"] != "update":
            return None
        files = self._files()
        manifest = mf.read_manifest(files)
        if manifest and any(g["run"] == conf["run"] for g in manifest["generations"]):
            return {"conf": conf, "skip": True}  # a resume of a run that had published: nothing new
        if self.finished is not None:  # restored from the run's last snapshot: the files are written
            _check_written(files, self.finished["gen"], self.finished["entry"])
            return self.finished
        gen = {"id": mf.generation_id(conf["run"]), "buckets": conf["buckets"]}
        entry = None
        if self.pending:
            keys, ids = self._merged()
            if conf["settings"].get("index_kind") == "bloom":
                entry = write_bloom(files, gen, self.bucket, keys, conf["settings"]["false_positive_rate"])
            else:
                entry = write_bucket(files, gen, self.bucket, keys, self._decoded(ids))
        # the run's last snapshot comes next (mdf.state.checkpoint): it keeps this, not the keys just written
        self.finished = {"conf": conf, "gen": gen, "entry": entry}
        self.pending, self.ids = [], []
        return self.finished

    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pending key once, sorted, with its row's number among all the batches' ids (a key added twice,
        by a retried batch: the first added; the kernel keeps a key's first occurrence, batches in order)."""
        from mdf_kernels import sort_unique_pairs

        rows = [r for _, r in self.pending]
        if len({r.dtype for r in rows}) > 1:  # past 4 G ids the later batches' are uint64: one type for Arrow
            rows = [r.astype(np.uint64) for r in rows]
        keys, ids = sort_unique_pairs(pa.chunked_array([k for k, _ in self.pending]), pa.chunked_array(rows))
        return keys.to_numpy(), ids.to_numpy()

    def _decoded(self, ids: np.ndarray) -> pa.Array:
        """The source ids ``ids`` (rows among all the batches' ids), dictionary-encoded over the ids of the rows
        they came from: no string is copied per key (MinHash files a row's id under every band), and the file
        stores each row's id once (:func:`~mdf_dedup.index.store.write_bucket`)."""
        dictionary = pa.concat_arrays(self.ids)
        used = np.zeros(len(dictionary), dtype=bool)  # the batches' other rows (duplicates, other buckets'): out
        used[ids] = True
        mask = as_numpy(dictionary.is_null())[ids] if dictionary.null_count else None
        picked = (np.cumsum(used) - 1)[ids]
        dictionary = dictionary.filter(pa.array(used))
        # Parquet cannot write a null inside a dictionary: a null id is a null index instead
        return pa.DictionaryArray.from_arrays(pa.array(picked, pa.int64(), mask=mask), dictionary.fill_null(""))

    @classmethod
    def commit(cls, namespace: str, results: list[Any], run: dict[str, Any]) -> None:
        results = [r for r in results if r is not None]
        if not results:
            return
        conf = results[0]["conf"]
        files = open_files(conf["path"])
        if not any(r.get("skip") for r in results):
            mf.check(files, conf["run"])
            manifest, tag = mf.read_manifest_tagged(files)
            manifest = manifest or mf.new_manifest(conf["operator"], conf["settings"])
            entries = sorted((r["entry"] for r in results if r["entry"]), key=lambda e: e["bucket"])
            manifest["generations"].append({
                **results[0]["gen"], "run": conf["run"], "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "keys": sum(e["keys"] for e in entries), "key_bytes": sum(e["key_bytes"] for e in entries),
                "source_bytes": sum(e["source_bytes"] for e in entries), "files": entries,
            })  # fmt: skip
            mf.write_manifest(files, manifest, tag)
        mf.release(files, conf["run"])
