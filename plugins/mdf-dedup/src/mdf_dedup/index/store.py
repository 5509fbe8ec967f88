"""An index's keys as one bucket of a run sees them: load the files it needs, look keys up, write new ones.

A generation written by a run with ``m`` buckets has one keys file per bucket ``f`` (the keys with
``key % m == f``, sorted ``uint64``, raw ``.npy``: 8 bytes a key, memory-mapped) and one sources file (Parquet,
zstd: the source id of each key, same order), read only when a row is rejected. Bucket ``b`` of a run with
``n`` buckets needs the keys with ``key % n == b``: the files ``f % n == b`` when ``n`` divides ``m`` (the usual
case: same bucket count, one file a generation), else the files that can hold them, filtered on load.
"""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mdf import OperatorError, as_numpy
from mdf_dedup.index.files import IndexFiles, publish_hashed
from mdf_dedup.index.manifest import gen_files

ROW_BITS = 40  # a hit's code: loaded-file slot << 40 | row in that file


class LoadedIndex:
    """The keys of every generation (but those of ``skip_run``) that bucket ``bucket`` of ``buckets`` needs."""

    def __init__(self, files: IndexFiles, manifest: dict[str, Any], bucket: int, buckets: int, skip_run: Any) -> None:
        self.files = files
        self.parts: list[tuple[np.ndarray, np.ndarray | None, str, int]] = []  # keys, rows in file, sources, bytes
        self._sources: dict[int, pa.Array] = {}
        self._source_sum: list[str | None] = []  # each part's sources file's checksum (the manifest's)
        self._sorted: Any = None  # an mdf_kernels.SortedKeys of every part's keys, made by the first lookup
        self._origin: np.ndarray | None = None  # several parts merged: each key's position among all parts' keys
        self._starts = np.zeros(1, dtype=np.int64)  # where each part's keys start among all parts' keys
        for gen in manifest["generations"]:
            if gen["run"] == skip_run:
                continue  # this run's own earlier publication (a rerun of it): not an earlier run
            m = gen["buckets"]
            by_bucket = {f["bucket"]: f for f in gen["files"]}
            wanted = [f for f in range(m) if m % buckets == 0 and f % buckets == bucket]
            if m % buckets:
                wanted = [bucket % m] if buckets % m == 0 else list(range(m))
            for f in wanted:
                if f in by_bucket:
                    self._load(gen, by_bucket[f], bucket, buckets, filtered=m % buckets != 0)

    def _load(self, gen: dict[str, Any], entry: dict[str, Any], bucket: int, buckets: int, filtered: bool) -> None:
        keys_name, sources_name = gen_files(gen, entry["bucket"])
        for name, expected in ((keys_name, entry["key_bytes"]), (sources_name, entry["source_bytes"])):
            size = self.files.size(name)
            if size != expected:
                what = (
                    "missing" if size is None else f"truncated or altered ({size} bytes, the manifest says {expected})"
                )
                raise OperatorError(
                    f"index generation file {self.files.path(name)} is {what}; restore it, or rebuild the index"
                )
        keys = self.files.load_keys(keys_name, entry["key_bytes"], entry.get("key_xxh3"))
        rows = None
        if filtered:
            rows = np.flatnonzero(keys % np.uint64(buckets) == bucket)
            keys = np.asarray(keys[rows])
        self.parts.append((keys, rows, sources_name, entry["keys"]))
        self._source_sum.append(entry.get("source_xxh3"))

    def __len__(self) -> int:
        return sum(len(k) for k, _, _, _ in self.parts)

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Per key: whether a loaded generation holds it.

        Searched through one ``mdf_kernels.SortedKeys`` directory (under a byte a key, built in one pass on the
        first call; see :meth:`_lookup`). Until this, the first call built one ``mdf_kernels.KeySet`` of every
        part's keys (16 bytes a key in memory). Profiled in a ``read`` run of the MinHash benchmark at 2 M rows
        (17 M index keys, 124 batches): the set's build took 0.57-0.63 s and its probes 0.36-0.40 s, and inline
        that runs under the key state's lock, so the worker threads queued behind it; outside a run, on the same
        number of keys, the directory is built in 0.03 s and probed in 0.34 s against the set's 0.6 s and
        0.23-0.25 s."""
        lookup = self._lookup()
        if lookup is None:
            return np.zeros(len(keys), dtype=bool)
        return as_numpy(lookup.contains(pa.array(keys, pa.uint64())))

    def _lookup(self) -> Any:
        """The keys to search, made on the first call: one generation's keys where they are (the memory-mapped
        file: nothing copied), or the keys of several merged once into memory (``mdf_kernels.merge_sorted_runs``,
        8 bytes a key plus 8 for where each came from, the earliest generation holding it), so a lookup stays
        one search however many generations there are (one search a generation would cost as many)."""
        if self._sorted is None and self.parts:
            from mdf_kernels import SortedKeys, merge_sorted_runs

            held = [pa.array(np.asarray(keys), pa.uint64()) for keys, _, _, _ in self.parts]
            self._starts = np.cumsum([0] + [len(h) for h in held])
            if len(held) == 1:
                keys = held[0]
            else:
                at = [
                    pa.array(np.arange(self._starts[i], self._starts[i + 1], dtype=np.uint64)) for i in range(len(held))
                ]
                keys, origin = merge_sorted_runs(pa.chunked_array(held, pa.uint64()), pa.chunked_array(at))
                self._origin = origin.to_numpy()
            self._sorted = SortedKeys(keys)
        return self._sorted

    def memory_bytes(self) -> int:
        """Bytes this bucket holds for the index: the directory, and the merged keys of several generations (one
        generation's memory-mapped file is the page cache's)."""
        if self._sorted is None:
            return 0
        merged = 16 * len(self._origin) if self._origin is not None else 0
        return int(self._sorted.memory_bytes()) + merged

    def locate(self, keys: np.ndarray) -> np.ndarray:
        """Per key: ``slot << 40 | row`` of the first generation holding it, or -1 (for :meth:`sources`)."""
        code = np.full(len(keys), -1, dtype=np.int64)
        lookup = self._lookup()
        if lookup is None:
            return code
        at = lookup.locate(pa.array(keys, pa.uint64())).to_numpy()
        hit = np.flatnonzero(at >= 0)
        where = at[hit] if self._origin is None else self._origin[at[hit]].astype(np.int64)
        slots = np.searchsorted(self._starts, where, side="right") - 1  # the part each key came from
        for slot in np.unique(slots):
            pick = slots == slot
            local = where[pick] - self._starts[slot]
            rows = self.parts[slot][1]  # a filtered part: its keys' rows in the file
            code[hit[pick]] = (int(slot) << ROW_BITS) | (local if rows is None else rows[local]).astype(np.int64)
        return code

    def sources(self, codes: np.ndarray) -> pa.Array:
        """The source id of each hit (``codes`` from :meth:`locate`), read from the sources files on first use."""
        slots = codes >> ROW_BITS
        rows = codes & ((1 << ROW_BITS) - 1)
        out = np.empty(len(codes), dtype=np.int64)
        pieces = []
        start = 0
        for slot in np.unique(slots):
            pick = np.flatnonzero(slots == slot)
            column = self.source_column(int(slot))
            pieces.append(plain(column.take(pa.array(rows[pick]))))
            out[pick] = np.arange(start, start + len(pick))
            start += len(pick)
        if not pieces:
            return pa.array([], pa.string())
        return pa.concat_arrays(pieces).take(pa.array(out))

    def source_column(self, slot: int) -> pa.Array:
        """The sources file of loaded part ``slot``, whole (read once), its content checked."""
        if slot not in self._sources:
            name, checksum = self.parts[slot][2], self._source_sum[slot]
            try:
                table = pq.read_table(self.files.open_table(name, checksum), columns=["source"])
            except (OSError, pa.ArrowException) as exc:
                raise OperatorError(f"index generation file {self.files.path(name)} cannot be read: {exc}") from exc
            self._sources[slot] = table.column(0).combine_chunks()
        return self._sources[slot]


# How a sources file is written: one row group up to 64 Mi keys (each row group repeats the dictionary of row
# ids), no statistics (min/max of every page's strings: nothing reads them, the whole column is read at once) and
# a dictionary page as big as the ids (past Parquet's 1 MiB default the writer falls back to one string a key).
# Profiled on 5.8 M keys of 500 K rows: 1.0 s with pyarrow's defaults, 0.2 s so; the file is the same column.
_SOURCES_FILE = {"row_group_size": 1 << 26, "write_statistics": False}


def write_bucket(
    files: IndexFiles, gen: dict[str, Any], bucket: int, keys: np.ndarray, sources: pa.Array
) -> dict[str, Any]:
    """Write one bucket's new keys (sorted, unique) and their sources; the manifest entry that lists them, with
    each file's size and checksum (xxh3-128: what a later run checks before it trusts a file).

    The keys file is written on a thread while the sources file is encoded: each is written, flushed to disk
    (or uploaded) and renamed on its own, and both wait mostly on the disk or the network, without the GIL."""
    keys_name, sources_name = gen_files(gen, bucket)
    writer = ThreadPoolExecutor(1, thread_name_prefix="mdf-index-write")
    keys_written = writer.submit(
        publish_hashed, files, keys_name, lambda f: np.save(f, np.ascontiguousarray(keys, dtype=np.uint64))
    )

    def parquet(f: Any) -> None:
        buf = io.BytesIO()
        # ids given as a dictionary (a run's: each kept row's id once) are written as that dictionary; plain ids
        # (a compaction's) keep Parquet's default, which stops hashing them past 1 MiB of distinct ids
        page = max(1 << 20, 2 * sources.dictionary.nbytes) if pa.types.is_dictionary(sources.type) else 1 << 20
        pq.write_table(pa.table({"source": sources}), buf, compression="zstd", dictionary_pagesize_limit=page,
                       **_SOURCES_FILE)  # fmt: skip
        f.write(buf.getvalue())

    try:
        source_bytes, source_sum = publish_hashed(files, sources_name, parquet)
    finally:
        writer.shutdown()  # waits for the keys file, also when the sources file failed
    key_bytes, key_sum = keys_written.result()
    return {"bucket": bucket, "keys": len(keys), "key_bytes": key_bytes, "source_bytes": source_bytes,
            "key_xxh3": key_sum, "source_xxh3": source_sum}  # fmt: skip


def plain(values: pa.Array) -> pa.Array:
    """Strings, whether the sources file stored them plain or dictionary-encoded."""
    return values.cast(pa.string()) if pa.types.is_dictionary(values.type) else values
