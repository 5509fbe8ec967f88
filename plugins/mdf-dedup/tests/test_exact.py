"""exact_dedup on real Parquet, inline and on a real local Ray: one row per distinct key, streaming or cluster."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from dedup_helpers import exact_corpus, recipe, write_corpus

from mdf.resolve import parse_recipe
from mdf.run import run_recipe
from mdf.testing import check_operator_contract, read_output, run_operator
from mdf_dedup.ops.exact import ExactDedup

pytestmark = pytest.mark.usefixtures("local_ray")  # mdf.testing: one Ray for the in-process Ray runs


def texts(batch: pa.RecordBatch) -> list[str]:
    return batch.column("text").to_pylist()


@pytest.mark.parametrize(
    ("normalize", "kept"),
    [
        ("none", ["Hello  World", "hello world", "Hello, world!", "héllo world", "he\u0301llo world"]),
        ("lower", ["Hello  World", "hello world", "Hello, world!", "héllo world", "he\u0301llo world"]),
        ("nfc_ws", ["Hello  World", "Hello, world!", "héllo world"]),
        ("alnum", ["Hello  World", "héllo world"]),
    ],
)
def test_normalize_modes_decide_what_is_the_same(normalize, kept):
    rows = ["Hello  World", "hello world", "Hello, world!", "héllo world", "he\u0301llo world", "Hello  World"]
    batch = pa.RecordBatch.from_pydict({"text": rows})
    out, rej = run_operator(ExactDedup(normalize=normalize), batch)
    assert texts(out) == kept
    assert rej.num_rows == len(rows) - len(kept)
    assert set(rej.column("_reason").to_pylist()) == {"exact_dedup:duplicate"}


def test_contract_and_nulls_are_never_duplicates():
    batch = pa.RecordBatch.from_pydict({"id": list("abcde"), "text": ["x", None, "x", None, "y"]})
    check_operator_contract(ExactDedup(), batch, id_column="id")
    out, _ = run_operator(ExactDedup(), batch)
    assert out.column("id").to_pylist() == ["a", "b", "d", "e"]


def test_duplicates_across_batches_of_one_run():
    op = ExactDedup()
    a, _ = run_operator(op, pa.RecordBatch.from_pydict({"text": ["p", "q"]}))
    b, rej = run_operator(op, pa.RecordBatch.from_pydict({"text": ["q", "r", "p"]}))
    assert texts(a) == ["p", "q"] and texts(b) == ["r"] and rej.num_rows == 2


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_streaming_keeps_exactly_one_row_per_group(tmp_path, executor):
    table = exact_corpus()
    glob = write_corpus(tmp_path / "in", table)
    r = recipe(tmp_path, glob, {"exact_dedup": {"column": "text"}}, {"type": executor, "batch_rows": 150})
    r["state"]["num_buckets"] = 3
    m = run_recipe(parse_recipe(r))
    kept, rejected = read_output(tmp_path / "run" / "out"), read_output(tmp_path / "run" / "rejected")
    groups = pc.unique(table.column("group"))
    assert kept.num_rows == len(groups) and sorted(kept.column("group").to_pylist()) == sorted(groups.to_pylist())
    assert kept.num_rows + rejected.num_rows == table.num_rows and m.balanced
    assert set(rejected.column("_reason").to_pylist()) == {"exact_dedup:duplicate"}
    stats = next(iter(m.key_state.values()))
    assert stats.keys == len(groups) and stats.buckets == 3
    assert stats.bytes_per_key <= 24 or len(groups) < 10_000  # small sets pay the table's minimum size


def test_cluster_mode_same_rows_inline_and_ray_first_in_input_order(tmp_path):
    table = exact_corpus(seed=4)
    glob = write_corpus(tmp_path / "in", table)
    op = {"exact_dedup": {"column": "text", "mode": "cluster", "cluster_column": "cluster"}}
    outs = {}
    for executor in ("inline", "ray"):
        r = recipe(tmp_path, glob, op, {"type": executor, "batch_rows": 100}, name=executor)
        m = run_recipe(parse_recipe(r))
        assert m.balanced and m.passes[0].clusters > 0
        outs[executor] = read_output(tmp_path / executor / "out")
    assert outs["inline"].equals(outs["ray"])
    kept = outs["inline"]
    first = {}
    for i, g in enumerate(table.column("group").to_pylist()):
        first.setdefault(g, i)
    assert sorted(kept.column("id").to_pylist()) == sorted(table.column("id").to_pylist()[i] for i in first.values())
    rejected = read_output(tmp_path / "inline" / "rejected")
    # every rejected row names its cluster, and that cluster's root is a kept row
    assert set(rejected.column("cluster").to_pylist()) <= set(kept.column("cluster").to_pylist())


def test_without_rejected_output_counts_stay_exact(tmp_path):
    table = exact_corpus(rows=1000, seed=5)
    glob = write_corpus(tmp_path / "in", table)
    r = recipe(tmp_path, glob, {"exact_dedup": {}}, {"type": "inline", "batch_rows": 100})
    del r["rejected"]
    m = run_recipe(parse_recipe(r))
    groups = len(pc.unique(table.column("group")))
    assert (m.rows_written, m.rows_rejected) == (groups, table.num_rows - groups) and m.balanced
    op = m.stages[0].operators[0]
    assert op.reasons == {"exact_dedup:duplicate": table.num_rows - groups}
