from __future__ import annotations

import importlib.util

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mdf.errors import RecipeError
from mdf.overrides import apply_overrides
from mdf.plugins import load_plugins
from mdf.recipe import ExecutorSpec
from mdf.resolve import choose_executor, load_recipe, parse_recipe
from mdf.run import prepare


@pytest.fixture
def data(tmp_path, core_plugins):
    pq.write_table(pa.table({"id": ["a"], "url": ["https://x.org/"], "text": ["hello world"]}), tmp_path / "a.parquet")
    return tmp_path


def recipe(data, **changes):
    r = {
        "reader": {"type": "parquet", "paths": [str(data / "*.parquet")]},
        "stages": [
            {
                "name": "clean",
                "operators": [{"char_count_filter": {"min_length": 5}}, {"listed_filter": {"values": ["x.org"]}}],
            }
        ],
        "writer": {"type": "parquet", "path": str(data / "out")},
    }
    r.update(changes)
    return r


def error_of(data_dict, overrides=None) -> RecipeError:
    plugins = load_plugins()
    with pytest.raises(RecipeError) as exc:
        prepare(parse_recipe(data_dict, overrides, plugins=plugins), plugins)
    return exc.value


def test_valid_recipe_parses_with_defaults(data):
    r = parse_recipe(recipe(data))
    assert r.executor.type is None and r.stages[0].replicas.min == 1
    assert choose_executor(r.executor, load_plugins())[0] == "inline"
    assert r.stages[0].operators[0].params == {"min_length": 5}


def test_unknown_operator_has_did_you_mean(data):
    r = recipe(data)
    r["stages"][0]["operators"][0] = {"char_cuont_filter": {"min_length": 5}}
    err = error_of(r)
    assert str(err) == (
        "stages[0].operators[0]: unknown operator 'char_cuont_filter'; did you mean 'char_count_filter'?"
    )


def test_wrong_parameter_type_names_path_and_value(data):
    r = recipe(data)
    r["stages"][0]["operators"][0] = {"char_count_filter": {"min_length": "long"}}
    err = error_of(r)
    assert err.path == "stages[0].operators[0].min_length"
    assert "'long'" in str(err)


def test_unknown_parameter_lists_allowed_ones(data):
    r = recipe(data)
    r["stages"][0]["operators"][0] = {"char_count_filter": {"min_len": 5}}
    err = error_of(r)
    assert err.path == "stages[0].operators[0].min_len"
    assert "unknown key 'min_len'; allowed: column, max_length, min_length" in str(err)


def test_unknown_top_level_key(data):
    err = error_of(recipe(data, writter={"type": "parquet"}))
    assert err.path == "writter" and "allowed:" in str(err) and "writer" in str(err)


def test_missing_reader_paths(data):
    err = error_of(recipe(data, reader={"type": "parquet"}))
    assert err.path == "reader.paths" and "missing" in str(err)


def test_no_matching_input_files(data):
    err = error_of(recipe(data, reader={"type": "parquet", "paths": [str(data / "nope-*.parquet")]}))
    assert err.path == "reader.paths[0]" and "no input file matches" in str(err)


def test_missing_column_is_reported_before_work(data):
    err = error_of(recipe(data, reader={"type": "parquet", "paths": [str(data / "a.parquet")], "columns": ["txt"]}))
    assert err.path == "reader.columns" and "'txt'" in str(err)


def test_missing_blocklist_file(data):
    r = recipe(data)
    r["stages"][0]["operators"][1] = {"listed_filter": {"listing": str(data / "missing.txt")}}
    assert error_of(r).path == "stages[0].operators[1].listing"


def test_replicas_bounds_checked(data):
    r = recipe(data)
    r["stages"][0]["replicas"] = {"min": 3, "max": 2}
    assert "make max >= min" in str(error_of(r))


def test_bad_writer_type(data):
    err = error_of(recipe(data, writer={"type": "parquett", "path": "x"}))
    assert err.path == "writer.type" and "did you mean 'parquet'" in str(err)


def test_overrides_reach_nested_keys_and_operator_params(data):
    r = parse_recipe(
        recipe(data),
        ["executor.batch_rows=16", "stages[0].operators[0].min_length=9", "stages.0.replicas.max=3"],
    )
    assert r.executor.batch_rows == 16
    assert r.stages[0].operators[0].params == {"min_length": 9}
    assert r.stages[0].replicas.max == 3


def test_override_errors_are_recipe_errors():
    with pytest.raises(RecipeError, match="has no '='"):
        apply_overrides({}, ["executor.type"])
    with pytest.raises(RecipeError, match="no list item 5"):
        apply_overrides({"stages": []}, ["stages[5].name=x"])


def test_load_recipe_reports_bad_yaml(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("reader: [unclosed\n")
    with pytest.raises(RecipeError, match="not valid YAML"):
        load_recipe(p)


def test_executor_choice_inline_unless_ray_is_named(monkeypatch):
    """No executor.type: inline, unless the recipe gives address or RAY_ADDRESS is set (the Ray executor claims
    the recipe: core names no executor but the default); type always wins."""
    plugins = load_plugins()
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert choose_executor(ExecutorSpec(), plugins) == (
        "inline",
        "no executor.type, and no installed executor is named by the recipe or the environment",
    )
    assert choose_executor(ExecutorSpec(address="127.0.0.1:6390"), plugins)[0] == "ray"
    assert choose_executor(ExecutorSpec(type="inline"), plugins)[0] == "inline"
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    assert choose_executor(ExecutorSpec(), plugins) == ("ray", "RAY_ADDRESS=10.0.0.5:6379 is set")
    assert choose_executor(ExecutorSpec(type="inline"), plugins)[0] == "inline"


def test_the_schema_imports_no_plugin_machinery():
    """recipe.py is the schema only: names are resolved by mdf.resolve. It imported the plugin manager, whose
    hook specifications name Recipe (a type-only import circle). Fails on that recipe.py: seen."""
    import subprocess
    import sys

    code = "import sys, mdf.recipe; print(sorted(m for m in sys.modules if m in ('mdf.plugins', 'mdf.hookspecs')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.skipif(
    getattr(importlib.util.find_spec("ray"), "origin", None) not in (None, "namespace"),
    reason="Ray is installed (the core session has none)",
)
def test_asking_for_ray_without_the_extra_names_the_pip_line(data):
    r = recipe(data)
    r["executor"] = {"type": "ray"}
    err = error_of(r)
    assert err.exit_code == 2
    assert str(err) == (
        "executor.type: executor 'ray' needs Ray, an optional extra of mdf-core: pip install \"mdf-core[ray]\""
    )
