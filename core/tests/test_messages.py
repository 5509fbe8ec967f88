"""What a user reads: recipe errors without pydantic's internal path segments, and `mdf ops` showing choices."""

from __future__ import annotations

from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import Field

from mdf import Filter, Params
from mdf.cli.ops import _param_line, describe
from mdf.errors import RecipeError
from mdf.resolve import parse_recipe


@pytest.fixture
def recipe(tmp_path, core_plugins):
    pq.write_table(pa.table({"id": ["a"], "text": ["hello world"]}), tmp_path / "a.parquet")
    return {
        "reader": {"type": "parquet", "paths": [str(tmp_path / "*.parquet")]},
        "stages": [{"name": "clean", "operators": [{"char_count_filter": {"min_length": 5}}]}],
        "writer": {"type": "parquet", "path": str(tmp_path / "out")},
    }


def error_of(data: dict, *overrides: str) -> RecipeError:
    with pytest.raises(RecipeError) as exc:
        parse_recipe(data, list(overrides))
    return exc.value


@pytest.mark.parametrize("key", ["executor.batch_rows", "executor.workers", "state.num_buckets"])
def test_union_errors_are_one_problem_without_member_tags(recipe, key):
    err = error_of(recipe, f"{key}=abc")
    assert str(err) == f"{key}: Input should be a valid integer or 'auto' (got 'abc')"


def test_validator_message_names_the_value_once(recipe):
    assert str(error_of(recipe, "executor.batch_rows=-3")) == "executor.batch_rows: must be >= 1 or 'auto', got -3"


def test_dict_keys_stay_in_the_path(recipe):
    err = error_of(recipe, "stages[0].resources.custom.ssd=x")
    assert err.path == "stages[0].resources.custom.ssd" and "(got 'x')" in str(err)


def test_other_problems_are_counted_once_each(recipe):
    err = error_of(recipe, "executor.batch_rows=abc", "executor.resume=abc")
    assert str(err).endswith("(got 'abc') (and 1 more problem)")


class _ChoiceFilter(Filter):
    """A filter with fixed choices."""

    name = "choice_filter"

    class Params(Params):
        normalize: Literal["none", "lower", "nfc_ws"] = Field("none", description="how")
        engine: Literal["auto", "native"] | None = None
        column: str = "text"

    def keep(self, batch):  # pragma: no cover - never run
        raise NotImplementedError


def test_ops_lists_the_choices_of_literal_params():
    params = {p["name"]: p for p in describe(_ChoiceFilter)["params"]}
    assert _param_line(params["normalize"]) == "normalize: none|lower|nfc_ws = none"
    assert params["normalize"]["choices"] == ["none", "lower", "nfc_ws"]
    assert _param_line(params["engine"]) == "engine: auto|native | None = None"
    assert params["engine"]["choices"] == ["auto", "native"]
    assert _param_line(params["column"]) == "column: str = 'text'" and params["column"]["choices"] is None


def test_missing_extra_gives_one_quoted_pip_line():
    from mdf.errors import MissingDependencyError

    class NeedsExtra(Filter):
        """Needs two modules one extra provides."""

        name = "needs_extra"
        requires = {"mdf_no_such_a": "mdf-x[big]", "mdf_no_such_b": "mdf-x[big]", "pyarrow": "pyarrow"}

        def keep(self, batch):  # pragma: no cover - never run
            raise NotImplementedError

    with pytest.raises(MissingDependencyError) as exc:
        NeedsExtra()
    assert str(exc.value) == "filter 'needs_extra' needs mdf_no_such_a, mdf_no_such_b: pip install 'mdf-x[big]'"


def test_run_and_demo_say_where_everything_is(recipe):
    from mdf.cli.where import where_lines

    with_rejected = parse_recipe(recipe, ["rejected.type=parquet", "rejected.path=rej"])
    out = recipe["writer"]["path"]
    assert where_lines(with_rejected) == [
        f"kept rows: {out}/",
        "rejected rows (with _reason): rej/",
        f"metrics: {out}/_mdf/metrics.json",
    ]
    assert where_lines(parse_recipe(recipe))[1].startswith("rejected rows: not kept (add `rejected:")


def test_the_table_explains_balanced():
    from mdf.metrics import RunMetrics
    from mdf.report import metrics_table

    m = RunMetrics(executor="inline", rows_read=3, rows_written=2, rows_rejected=1)
    assert "(balanced)" in metrics_table(m).title
    assert metrics_table(m).caption.startswith("balanced: rows read = kept + rejected")
