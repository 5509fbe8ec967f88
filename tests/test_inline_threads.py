"""The inline executor on several threads gives exactly what one thread gives.

Guards the contract of :mod:`mdf.executor.inline`: per-shard part files with the same rows in the same order,
and streaming deduplicators (exact and MinHash) that keep the same rows as a sequential run, because they
see batches in input order. Real Parquet files with planted duplicates across shards, small batches so that
many batches of different shards interleave, a shard that a filter empties, and an empty input file.
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mdf.demo_data import dedup_table
from mdf.errors import OperatorError
from mdf.resolve import parse_recipe
from mdf.run import run_recipe

pytest.importorskip("mdf_dedup")
pytest.importorskip("mdf_kernels")
pytest.importorskip("mdf_text")

FILES = 7


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> str:
    """3,000 pages with exact and near copies spread over 7 files, plus an empty file in the middle."""
    out = tmp_path_factory.mktemp("corpus")
    table = dedup_table(3_000, exact_rate=0.15, near_rate=0.15, mean_words=60, seed=5)
    cut = table.num_rows // FILES
    for i in range(FILES):
        part = table.slice(i * cut, cut if i < FILES - 1 else None)
        if i == 2:  # a shard whose rows an earlier filter drops entirely: it must still take its turns
            part = part.set_column(part.schema.get_field_index("text"), "text", pa.array(["x"] * part.num_rows))
        pq.write_table(part, out / f"part-{i:02d}.parquet")
    pq.write_table(table.slice(0, 0), out / "part-03b.parquet")  # no rows at all
    return str(out / "*.parquet")


def _run(corpus: str, out: Path, operators: list, workers: int, batch_rows: int = 97):
    recipe = {
        "reader": {"type": "parquet", "paths": [corpus], "columns": ["id", "text"]},
        "stages": [
            {"name": "clean", "operators": [{"text_length_filter": {"min_length": 20}}]},
            {"name": "dedup", "operators": operators},
        ],
        "writer": {"type": "parquet", "path": str(out / "out")},
        "rejected": {"type": "parquet", "path": str(out / "rejected")},
        "executor": {"type": "inline", "workers": workers, "batch_rows": batch_rows},
    }
    metrics = run_recipe(parse_recipe(recipe))
    parts = {p.name: pq.read_table(p) for p in sorted((out / "out").glob("*.parquet"))}
    return parts, metrics


@pytest.mark.parametrize(
    "operators",
    [
        [{"exact_dedup": {"column": "text"}}],
        [{"minhash_dedup": {"column": "text", "threshold": 0.5, "num_perm": 64}}],
        [{"exact_dedup": {"column": "text"}}, {"minhash_dedup": {"column": "text", "threshold": 0.5}}],
    ],
    ids=["exact", "minhash", "exact+minhash"],
)
def test_threads_keep_the_same_rows_in_the_same_part_files(corpus, tmp_path, operators):
    one, m1 = _run(corpus, tmp_path / "one", operators, workers=1)
    many, m4 = _run(corpus, tmp_path / "many", operators, workers=4)
    assert m4.executor_metrics.workers == 4 and m1.executor_metrics.workers == 1
    assert list(one) == list(many)
    for name in one:
        assert one[name].equals(many[name]), f"{name} differs between 1 and 4 worker threads"
    dedup_rejected = sum(m.rows_rejected for m in m1.stages[1].operators)
    assert dedup_rejected > 100  # the corpus has copies across shards: the test can tell orders apart
    assert (m1.rows_read, m1.rows_written, m1.rows_rejected) == (m4.rows_read, m4.rows_written, m4.rows_rejected)
    assert m4.balanced
    per_op = [(o.name, o.rows_in, o.rows_out) for o in m4.operators()]
    assert per_op == [(o.name, o.rows_in, o.rows_out) for o in m1.operators()]


def test_an_operator_failure_in_one_shard_fails_the_run_promptly(corpus, tmp_path):
    """A shard whose column has the wrong type fails; the other threads stop instead of waiting forever."""
    bad = tmp_path / "bad"
    bad.mkdir()
    for p in sorted(Path(corpus).parent.glob("part-0[0-2].parquet")):
        (bad / p.name).write_bytes(p.read_bytes())
    pq.write_table(pa.table({"id": ["a"], "text": pa.array([7], pa.int64())}), bad / "part-01z.parquet")
    start = time.monotonic()
    with pytest.raises(OperatorError, match="text_length_filter"):
        _run(str(bad / "*.parquet"), tmp_path / "run", [{"exact_dedup": {"column": "text"}}], workers=3)
    assert time.monotonic() - start < 60
    assert not list((tmp_path / "run" / "out").glob("*.tmp"))
