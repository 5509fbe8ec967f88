"""The one shard runner (``mdf.executor.shard``): every executor follows one offset rule, so a row's position,
which deduplicators claim keys with and ``cluster_column`` holds, is the same inline and on Ray (both Ray modes)
when a reader rejects a record, and does not depend on how the shard was cut into batches."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from mdf import REASON, Shard
from mdf.executor.batches import shard_batches
from mdf.resolve import parse_recipe
from mdf.run import run_recipe

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda"]
TEXTS = [f"{WORDS[i // 3 % 11]} {i // 3} page " * 80 for i in range(160)]  # ~1 KB each: a 64 KiB block holds ~60
BLOCK = 1 << 16  # the JSONL reader's smallest block: its rejections come after each block's rows


def damaged_jsonl(folder):
    """Two shards; the first has one damaged record (not JSON) in its first block of lines, whose rejection the
    reader hands over after that block's rows and before the next block's. Each text comes three times in a row
    and again in the other shard, so clusters start (their kept row) all along the file, after the damage too."""
    folder.mkdir()
    lines = [json.dumps({"id": f"a{i:03d}", "text": t}) for i, t in enumerate(TEXTS)]
    lines.insert(1, '{"id": "broken", "text": ')  # the reader rejects it (reader:bad_json)
    (folder / "a.jsonl").write_text("\n".join(lines) + "\n")
    other = [json.dumps({"id": f"b{i:03d}", "text": t}) for i, t in enumerate(reversed(TEXTS))]
    (folder / "b.jsonl").write_text("\n".join(other) + "\n")
    return str(folder / "*.jsonl")


def recipe(tmp, paths, executor):
    return {
        "reader": {"type": "jsonl", "paths": [paths], "block_bytes": BLOCK},
        "stages": [{"name": "dedup", "operators": [
            {"exact_dedup": {"column": "text", "mode": "cluster", "cluster_column": "cluster"}}]}],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / "rejected")},
        "executor": executor,
    }  # fmt: skip


def rows(folder):
    """Every row of the output (kept and rejected), with its cluster column, by id."""
    tables = [pq.read_table(p) for p in sorted(folder.glob("*.parquet"))]
    table = pa.concat_tables(tables, promote_options="permissive")
    table = table.filter(pc.is_valid(table.column("cluster")))  # the reader's rejection has no cluster
    return dict(zip(table.column("id").to_pylist(), table.column("cluster").to_pylist(), strict=True))


def run(tmp, name, paths, executor):
    folder = tmp / name
    metrics = run_recipe(parse_recipe(recipe(folder, paths, executor)))
    assert metrics.reader_reasons and metrics.balanced
    return {**rows(folder / "out"), **rows(folder / "rejected")}


class MixedReader:
    """A reader that hands its rejections inside the batches, beside kept rows (every fifth row is bad)."""

    def read(self, shard, batch_rows):
        ids = list(range(40))
        reason = [REJECTED if i % 5 == 1 else None for i in ids]
        table = pa.table({"id": ids, REASON: pa.array(reason, pa.string())})
        yield from table.to_batches(max_chunksize=batch_rows)


REJECTED = "reader:bad_value"


@pytest.mark.parametrize("batch_rows", [3, 7, 40])
def test_a_position_is_the_rank_among_the_rows_the_reader_kept(batch_rows):
    """The offset rule (``shard_batches``): a batch's offset counts the rows the reader kept before it, so the
    operators' positions are 0, 1, 2, ... over the kept rows whatever the batch size or where the reader puts
    its rejections. Seen red with Ray's old rule (the offset counting the rejected rows too) at 3 and 7 rows a batch:
    the offsets ran ahead of the kept rows' ranks after each batch with a rejection (at 40, one batch, it held)."""
    good = [i for i in range(40) if i % 5 != 1]
    positions = []
    for read, kept, rejected in shard_batches(MixedReader(), Shard("s", "x", index=0), batch_rows):
        assert read.rows == kept.num_rows + sum(r.num_rows for r in rejected)
        assert kept.column("id").to_pylist() == good[read.offset : read.offset + kept.num_rows]
        positions += [read.offset + i for i in range(kept.num_rows)]
    assert positions == list(range(len(good)))


@pytest.mark.usefixtures("local_ray")
@pytest.mark.parametrize("whole_shards", [False, True], ids=["chain", "whole_shards"])
def test_cluster_column_is_the_same_inline_and_on_ray(tmp_path, whole_shards):
    """One damaged record, several batches a shard: every row's cluster position equal inline and on Ray, in the
    chain and in whole-shard mode. Seen red on eefbc81, both modes: Ray's loaders counted the rejected record into
    the offset, inline did not, so every row after the damaged record's batch was one position further on Ray."""
    pytest.importorskip("mdf_dedup", reason="needs mdf-dedup (exact_dedup)")
    paths = damaged_jsonl(tmp_path / "in")
    inline = run(tmp_path, "inline", paths, {"type": "inline", "batch_rows": 16})
    on_ray = run(tmp_path, "ray", paths, {"type": "ray", "batch_rows": 16, "whole_shards": whole_shards})
    assert on_ray == inline
