"""minhash_dedup against planted near-duplicates: precision and recall, inline and Ray, cluster mode."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from dedup_helpers import recipe, write_corpus

from mdf.demo_data import dedup_table
from mdf.errors import RecipeError
from mdf.resolve import parse_recipe
from mdf.run import run_recipe
from mdf.testing import check_operator_contract, read_output
from mdf_dedup.ops.minhash import MinHashDedup

pytestmark = pytest.mark.usefixtures("local_ray")  # mdf.testing: one Ray for the in-process Ray runs

# Planted copies have 3 % of their words replaced: with word 5-grams their Jaccard similarity to the original
# is ~0.70-0.79 (median 0.75), so the LSH threshold sits below that.
THRESHOLD = 0.6


def truth(table: pa.Table) -> np.ndarray:
    """True for every row whose group already appeared earlier in the file (a planted copy)."""
    seen: set[int] = set()
    out = []
    for g in table.column("group").to_pylist():
        out.append(g in seen)
        seen.add(g)
    return np.array(out)


def precision_recall(table: pa.Table, rejected: pa.Table) -> tuple[float, float]:
    """Per group, all but one row should go; rejected rows of a group count as right up to that number."""
    groups = table.column("group").to_numpy()
    dup_per_group = np.bincount(groups, minlength=groups.max() + 1) - 1
    rej_groups = rejected.column("group").to_numpy() if rejected.num_rows else np.zeros(0, dtype=np.int64)
    rej_per_group = np.bincount(rej_groups, minlength=len(dup_per_group))
    right = np.minimum(rej_per_group, np.maximum(dup_per_group, 0)).sum()
    return right / max(len(rej_groups), 1), right / max(dup_per_group[dup_per_group > 0].sum(), 1)


def test_contract_and_band_choice():
    op = MinHashDedup(threshold=THRESHOLD)
    assert op.bands * op.rows <= 128
    batch = dedup_table(200, seed=1).to_batches()[0]
    check_operator_contract(op, pa.RecordBatch.from_arrays(batch.columns, schema=batch.schema), id_column="id")
    with pytest.raises(ValueError, match="set both bands and rows"):
        MinHashDedup(bands=4)
    with pytest.raises(ValueError, match="exceeds num_perm"):
        MinHashDedup(bands=20, rows=10)


def test_bad_bands_in_a_recipe_exit_before_work(tmp_path):
    r = recipe(tmp_path, str(tmp_path / "*.parquet"), {"minhash_dedup": {"bands": 64, "rows": 4}}, {"type": "inline"})
    with pytest.raises(RecipeError, match=r"stages\[0\]\.operators\[0\]"):
        parse_recipe(r)


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_precision_and_recall_on_planted_near_duplicates(tmp_path, executor):
    table = dedup_table(3000, exact_rate=0.1, near_rate=0.1, seed=21)
    glob = write_corpus(tmp_path / "in", table)
    op = {"minhash_dedup": {"threshold": THRESHOLD}}
    m = run_recipe(parse_recipe(recipe(tmp_path, glob, op, {"type": executor, "batch_rows": 200})))
    precision, recall = precision_recall(table, read_output(tmp_path / "run" / "rejected"))
    bands, rows = MinHashDedup(threshold=THRESHOLD).bands, MinHashDedup(threshold=THRESHOLD).rows
    print(f"{executor}: threshold={THRESHOLD} bands={bands} rows={rows} precision={precision:.4f} recall={recall:.4f}")
    assert m.balanced and precision >= 0.99 and recall >= 0.9


def test_cluster_mode_identical_inline_and_ray(tmp_path):
    table = dedup_table(2000, exact_rate=0.1, near_rate=0.15, seed=22)
    glob = write_corpus(tmp_path / "in", table)
    op = {"minhash_dedup": {"threshold": THRESHOLD, "mode": "cluster", "cluster_column": "cluster"}}
    out = {}
    for executor in ("inline", "ray"):
        r = recipe(tmp_path, glob, op, {"type": executor, "batch_rows": 128}, name=executor)
        r["state"]["num_buckets"] = 2
        run_recipe(parse_recipe(r))
        out[executor] = (read_output(tmp_path / executor / "out"), read_output(tmp_path / executor / "rejected"))
    assert out["inline"][0].equals(out["ray"][0]) and out["inline"][1].equals(out["ray"][1])
    precision, recall = precision_recall(table, out["inline"][1])
    assert precision >= 0.99 and recall >= 0.9


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_verify_keeps_band_collisions_below_the_threshold(tmp_path, executor):
    # near copies with 10 % of words replaced have Jaccard ~0.45: a permissive banding (42 x 3) flags most of
    # them; verify (threshold 0.6) must keep them and still drop the exact copies
    table = dedup_table(2000, exact_rate=0.05, near_rate=0.15, change_rate=0.10, mean_words=120, seed=23)
    glob = write_corpus(tmp_path / "in", table)
    out = {}
    for verify in (False, True):
        op = {"minhash_dedup": {"threshold": 0.6, "bands": 42, "rows": 3, "verify": verify}}
        r = recipe(tmp_path, glob, op, {"type": executor, "batch_rows": 200}, name=f"v{verify}")
        r["state"]["num_buckets"] = 2
        m = run_recipe(parse_recipe(r))
        assert m.balanced
        rejected = read_output(tmp_path / f"v{verify}" / "rejected")
        near = rejected.filter(rejected.column("near")).num_rows
        exact = precision_recall(table.filter(pa.compute.invert(table.column("near"))), rejected)[1]
        out[verify] = (near, exact)
    near_planted = sum(table.column("near").to_pylist())
    print(f"{executor}: near copies dropped without verify {out[False][0]}, with {out[True][0]}, of {near_planted}")
    assert out[False][0] > 0.4 * near_planted  # the banding alone does flag them
    assert out[True][0] <= 0.02 * near_planted
    assert out[True][1] >= 0.97  # exact copies: still found


def test_verify_needs_streaming_mode():
    with pytest.raises(ValueError, match="verify works in mode: streaming"):
        MinHashDedup(verify=True, mode="cluster")
