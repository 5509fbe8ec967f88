"""``score_filter``: cuts on a numeric column given as min / max, or as a top fraction whose threshold is
estimated from Parquet scores, in recipes run inline, and its recipe errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mdf import RecipeError
from mdf.ops.score import ScoreFilter, estimate_threshold
from mdf.resolve import parse_recipe
from mdf.testing import run_operator


def scored(tmp_path: Path, n: int = 1000, files: int = 2) -> tuple[Path, np.ndarray]:
    """``files`` Parquet files of rows with a float32 ``score`` (some null) and an int ``rank``."""
    rng = np.random.default_rng(5)
    score = rng.random(n).astype(np.float32)
    nulls = np.zeros(n, bool)
    nulls[::97] = True
    folder = tmp_path / "scored"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(n), files)):
        column = pa.array(score[part], pa.float32(), mask=nulls[part])
        pq.write_table(pa.table({"id": part, "score": column, "rank": part % 10}), folder / f"part-{i}.parquet")
    (folder / "_mdf").mkdir()  # what a run writes beside its data: not read as scores
    (folder / "_mdf" / "metrics.json").write_text("{}")
    return folder, np.where(nulls, np.nan, score)


def test_min_and_max_keep_the_band_and_nulls_fail(tmp_path, run_recipe) -> None:
    """Rows in = kept + rejected; kept scores lie in [min, max]; a null score is rejected with the same reason."""
    folder, score = scored(tmp_path)
    recipe = {
        "reader": {"type": "parquet", "paths": [str(folder)]},
        "stages": [{"name": "cut", "operators": [{"score_filter": {"column": "score", "min": 0.2, "max": 0.7}}]}],
    }
    kept, rejected, _ = run_recipe(recipe)
    want = np.flatnonzero((score >= np.float32(0.2)) & (score <= np.float32(0.7)))
    assert sorted(kept.column("id").to_pylist()) == want.tolist()
    assert kept.num_rows + rejected.num_rows == len(score)
    assert set(rejected.column("_reason").to_pylist()) == {"score_filter:score"}
    assert rejected.filter(pa.compute.is_null(rejected.column("score"))).num_rows == np.isnan(score).sum()


def test_top_fraction_keeps_exactly_the_top_scores(tmp_path, run_recipe) -> None:
    """The top 10 % of 990 non-null scores is 99 rows, the highest ones. Fails with the quantile taken as the
    lower neighbour (100 rows, one below the cut): seen."""
    folder, score = scored(tmp_path)
    cut = {"column": "score", "top_fraction": 0.1, "estimate_from": [str(folder)]}
    recipe = {
        "reader": {"type": "parquet", "paths": [str(folder)]},
        "stages": [{"name": "cut", "operators": [{"score_filter": cut}]}],
    }
    kept, rejected, _ = run_recipe(recipe)
    valid = np.sort(score[~np.isnan(score)])[::-1]
    assert kept.num_rows == 99 and kept.num_rows + rejected.num_rows == len(score)
    assert sorted(kept.column("score").to_pylist(), reverse=True) == valid[:99].tolist()


def test_sampled_threshold_is_the_same_on_every_worker_and_close(tmp_path) -> None:
    """Above sample_rows the threshold comes from a seeded sample: two workers agree, and it is near the exact
    quantile."""
    folder, score = scored(tmp_path, n=20_000, files=4)
    a = estimate_threshold([str(folder)], "score", 0.25, sample_rows=2000)
    b = estimate_threshold([str(folder)], "score", 0.25, sample_rows=2000)
    assert a == b
    assert a == pytest.approx(np.nanquantile(score, 0.75), abs=0.03)
    assert estimate_threshold([str(folder)], "rank", 0.2, sample_rows=10**6) == 8  # integer column


def test_min_raises_the_estimated_threshold(tmp_path) -> None:
    folder, _ = scored(tmp_path)
    op = ScoreFilter(column="score", top_fraction=0.5, estimate_from=[str(folder)], min=0.9)
    kept, _ = run_operator(op, pa.RecordBatch.from_pydict({"score": pa.array([0.6, 0.95], pa.float32())}))
    assert kept.column("score").to_pylist() == pytest.approx([0.95])


@pytest.mark.parametrize(
    ("params", "key", "message"),
    [
        ({"column": "score"}, "", "give min, max or top_fraction"),
        ({"column": "score", "min": 0.9, "max": 0.1}, "", "min 0.9 is above max 0.1"),
        ({"column": "score", "top_fraction": 0.1}, "", "top_fraction needs estimate_from"),
        ({"column": "score", "top_fraction": 1.5, "estimate_from": ["x"]}, "top_fraction", "less than or equal to 1"),
        (
            {"column": "nope", "top_fraction": 0.1, "estimate_from": ["{d}"]},
            "estimate_from",
            "no numeric column 'nope'",
        ),
        (
            {"column": "score", "top_fraction": 0.1, "estimate_from": ["{d}/none*"]},
            "estimate_from",
            "no input file matches",
        ),
    ],
)
def test_recipe_errors_name_the_yaml_path(tmp_path, params, key, message) -> None:
    folder, _ = scored(tmp_path)
    if "estimate_from" in params:
        params = {**params, "estimate_from": [p.format(d=folder) for p in params["estimate_from"]]}
    recipe = {
        "reader": {"type": "parquet", "paths": [str(folder)]},
        "stages": [{"name": "cut", "operators": [{"score_filter": params}]}],
        "writer": {"type": "parquet", "path": str(tmp_path / "out")},
    }
    with pytest.raises(RecipeError) as exc:
        parse_recipe(recipe)
    assert exc.value.path == "stages[0].operators[0]" + (f".{key}" if key else "")
    assert message in str(exc.value), str(exc.value)
