"""Draw rows at random across all shards and profile them, without holding the sample's media in memory.

The seed profiles the head of the data; the head of a crawl is one domain, one day, one language. Here the
row indices are drawn uniformly over the whole input. For Parquet the footers give every row group's row
count, so only the row groups holding drawn rows are read, batch by batch, keeping just the drawn rows. When
the draw touches more row groups than ``max_row_groups`` (a big set with small row groups), that many row
groups are picked at random (weighted by rows) and the rows are drawn inside them: a cluster sample, which
bounds the reading at a small price in independence. Other readers have no row counts: their shards are read
in random order until enough rows are seen, and the total is extrapolated from file sizes.

Each chunk of drawn rows is reduced to per-row numbers (payload bytes, characters) at once; whole rows are
kept only up to ``keep_bytes``, for ``--measure``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mdf.batching.payload import MediaFiles, referenced_file_bytes, row_payload_bytes, row_text_chars
from mdf.batching.rules import MB, Rule, sample_size
from mdf.io.base import Reader, Shard
from mdf.io.parquet import ParquetReader
from mdf.metrics import REASON

STREAM_ROWS = 10_000  # rows read from unsized inputs before extrapolating


@dataclass
class Sample:
    """Per-row numbers of the sampled rows, and a bounded table of whole sampled rows."""

    rows_total: int
    row_bytes: np.ndarray
    text_chars: np.ndarray
    table: pa.Table | None
    rules: list[Rule] = field(default_factory=list)
    files: MediaFiles = field(default_factory=MediaFiles)
    exact_total: bool = True
    largest_row_group: tuple[int, float] = (0, 0.0)  # (rows, uncompressed bytes of the read columns)

    @property
    def rows_sampled(self) -> int:
        return len(self.row_bytes)


class _Collector:
    """Reduces chunks of sampled rows to numbers; keeps whole rows while under ``keep_bytes``."""

    def __init__(self, keep_bytes: int, path_columns: list[str]) -> None:
        self.keep_bytes = keep_bytes
        self.path_columns = path_columns
        self.kept_bytes = 0.0
        self.bytes: list[np.ndarray] = []
        self.chars: list[np.ndarray] = []
        self.kept: list[pa.Table] = []
        self.files = MediaFiles()

    def add(self, chunk: pa.Table, base_dir: str) -> None:
        if chunk.num_rows == 0:
            return
        if REASON in chunk.schema.names:  # rows the reader could not decode are not data
            chunk = chunk.filter(pc.is_null(chunk.column(REASON)))
        payload = row_payload_bytes(chunk) + referenced_file_bytes(chunk, self.path_columns, [base_dir], self.files)
        self.bytes.append(payload)
        self.chars.append(row_text_chars(chunk))
        if self.kept_bytes < self.keep_bytes:
            self.kept.append(chunk)
            self.kept_bytes += float(payload.sum())

    def sample(self, rows_total: int, rules: list[Rule], exact: bool = True) -> Sample:
        kept = pa.concat_tables(self.kept, promote_options="permissive") if self.kept else None
        return Sample(
            rows_total,
            np.concatenate(self.bytes) if self.bytes else np.zeros(0),
            np.concatenate(self.chars) if self.chars else np.zeros(0),
            kept,
            rules,
            self.files,
            exact,
        )


def draw_sample(
    reader: Reader,
    shards: list[Shard],
    *,
    seed: int = 0,
    max_row_groups: int = 64,
    keep_bytes: int = 64 * MB,
    path_columns: list[str] | None = None,
) -> Sample:
    """Sample ``reader``'s input by the seed's sizes (see :func:`~mdf.batching.rules.sample_size`).

    :param path_columns: columns whose values name files an operator loads: their sizes count as row bytes.
    """
    rng = np.random.default_rng(seed)
    collector = _Collector(keep_bytes, path_columns or [])
    if isinstance(reader, ParquetReader) and all(s.rows is not None for s in shards):
        return _sample_parquet(shards, reader.params.columns, rng, max_row_groups, collector)
    return _sample_stream(reader, shards, rng, collector)


def _row_groups(
    shards: list[Shard], columns: list[str] | None
) -> tuple[list[tuple[int, int]], np.ndarray, tuple[int, float]]:
    """Every (shard index, row group) of the input with its row count, and the largest group, from the footers.

    The largest group matters because the Parquet reader loads a row group's column chunks whole: no batch
    size makes reading take less memory than that.
    """
    groups: list[tuple[int, int]] = []
    rows: list[int] = []
    largest = (0, 0.0)
    for i, shard in enumerate(shards):
        meta = pq.read_metadata(shard.path)
        start = shard.start or 0
        stop = shard.stop if shard.stop is not None else meta.num_row_groups
        for g in range(start, stop):
            rg = meta.row_group(g)
            groups.append((i, g))
            rows.append(rg.num_rows)
            size = sum(
                rg.column(c).total_uncompressed_size
                for c in range(rg.num_columns)
                if columns is None or rg.column(c).path_in_schema.split(".")[0] in columns
            )
            largest = max(largest, (rg.num_rows, float(size)), key=lambda x: x[1])
    return groups, np.array(rows, dtype=np.int64), largest


def _sample_parquet(
    shards: list[Shard], columns: list[str] | None, rng: np.random.Generator, max_groups: int, collector: _Collector
) -> Sample:
    groups, rows, largest = _row_groups(shards, columns)
    total = int(rows.sum())
    n, rule = sample_size(total)
    rules = [rule]
    starts = np.concatenate([[0], np.cumsum(rows)[:-1]]) if len(rows) else np.zeros(0, dtype=np.int64)
    picked = np.sort(rng.choice(total, size=n, replace=False)) if n else np.zeros(0, dtype=np.int64)
    owner = np.searchsorted(starts, picked, side="right") - 1
    touched = np.unique(owner)
    if len(touched) > max_groups:
        # Cluster sample: random row groups (weighted by rows), rows drawn uniformly inside them.
        chosen = np.sort(rng.choice(len(rows), size=max_groups, replace=False, p=rows / total))
        local_total = int(rows[chosen].sum())
        local = np.sort(rng.choice(local_total, size=min(n, local_total), replace=False))
        local_starts = np.concatenate([[0], np.cumsum(rows[chosen])[:-1]])
        which = np.searchsorted(local_starts, local, side="right") - 1
        owner = chosen[which]
        picked = starts[owner] + (local - local_starts[which])
        rules.append(
            Rule(
                "cluster_sample",
                f"the draw touched {len(touched):,} row groups; read {max_groups} random ones of {len(rows):,}",
                {"row_groups_touched": len(touched), "row_groups_read": max_groups, "row_groups_total": len(rows)},
            )
        )
    order = rng.permutation(np.unique(owner))  # random order, so the rows kept whole are not the first files
    for gi in order.tolist():
        local_idx = picked[owner == gi] - starts[gi]
        shard_i, g = groups[gi]
        path = shards[shard_i].path
        for chunk in _take_rows(path, g, local_idx, columns):
            collector.add(chunk, os.path.dirname(path))
    sample = collector.sample(total, rules)
    sample.largest_row_group = largest
    return sample


def _take_rows(path: str, group: int, local_idx: np.ndarray, columns: list[str] | None) -> Iterator[pa.Table]:
    """The given rows of one row group, streamed in batches so a row group of images is never whole in memory."""
    pf = pq.ParquetFile(path)
    offset = 0
    for batch in pf.iter_batches(batch_size=1024, row_groups=[group], columns=columns):
        lo, hi = np.searchsorted(local_idx, [offset, offset + batch.num_rows])
        if hi > lo:
            yield pa.Table.from_batches([batch.take(pa.array(local_idx[lo:hi] - offset))])
        offset += batch.num_rows


def _sample_stream(reader: Reader, shards: list[Shard], rng: np.random.Generator, collector: _Collector) -> Sample:
    """Unsized input: read whole shards in random order until ``STREAM_ROWS`` rows, then subsample those."""
    seen: list[pa.Table] = []
    rows_seen = 0
    sized_rows, sized_bytes = 0, 0
    order = rng.permutation(len(shards)).tolist()
    done = 0
    for i in order:
        shard = shards[i]
        shard_rows = 0
        for batch in reader.read(shard, 4096):
            seen.append(pa.Table.from_batches([batch]))
            shard_rows += batch.num_rows
        rows_seen += shard_rows
        sized_rows, sized_bytes, done = sized_rows + shard_rows, sized_bytes + shard.size, done + 1
        if rows_seen >= STREAM_ROWS:
            break
    all_bytes = sum(s.size for s in shards)
    exact = done == len(shards)
    total = rows_seen if exact or sized_bytes == 0 else round(sized_rows * all_bytes / sized_bytes)
    n, rule = sample_size(total)
    rules = [rule]
    if not exact:
        rules.append(
            Rule(
                "estimated_total",
                f"no row counts without reading: {sized_rows:,} rows in {done} of {len(shards)} shards"
                f" ({sized_bytes:,} of {all_bytes:,} bytes) -> about {total:,} rows",
                {"rows_read": sized_rows, "shards_read": done, "shards_total": len(shards)},
            )
        )
    if seen:
        table = pa.concat_tables(seen, promote_options="permissive")
        take = np.sort(rng.choice(table.num_rows, size=min(n, table.num_rows), replace=False))
        collector.add(table.take(pa.array(take)), os.path.dirname(shards[order[0]].path))
    return collector.sample(total, rules, exact)
