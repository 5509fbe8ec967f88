"""End to end: the CLI runs a text recipe on hand-written records and keeps exactly the right rows."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from mdf.testing import read_output

DATA = Path(__file__).parent / "data" / "cc_sample.jsonl"
BLOCKLIST = Path(__file__).parents[1] / "examples" / "blocklist.txt"

# worked out by hand from tests/data/cc_sample.jsonl and examples/blocklist.txt (min 200, max 100000 chars)
EXPECTED_KEPT = ["r01", "r04", "r06", "r07", "r09", "r14", "r17", "r19", "r20"]
EXPECTED_REJECTED = {
    "r02": "url_filter:blocked_domain",
    "r05": "url_filter:blocked_domain",
    "r10": "url_filter:blocked_domain",
    "r15": "url_filter:blocked_domain",
    "r08": "url_filter:bad_url",
    "r18": "url_filter:bad_url",
    "r03": "text_length_filter:too_short",
    "r11": "text_length_filter:too_short",
    "r13": "text_length_filter:too_short",
    "r12": "text_length_filter:null_text",
    "r16": "text_length_filter:too_long",
}


def write_recipe(tmp_path: Path, reader: dict, **extra) -> Path:
    recipe = {
        "reader": reader,
        "stages": [
            {
                "name": "clean",
                "operators": [
                    {"url_filter": {"blocklist": str(BLOCKLIST)}},
                    {"text_length_filter": {"min_length": 200, "max_length": 100000}},
                ],
            }
        ],
        "writer": {"type": "parquet", "path": str(tmp_path / "out")},
        "rejected": {"type": "parquet", "path": str(tmp_path / "rejected")},
        "executor": {"type": "inline", "batch_rows": 4},
        **extra,
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


def good_records() -> list[dict]:
    out = []
    for line in DATA.read_bytes().splitlines():
        with contextlib.suppress(UnicodeDecodeError, json.JSONDecodeError):
            out.append(json.loads(line.decode()))
    return out


def check_outputs(tmp_path: Path, reader_rejects: int) -> None:
    kept = read_output(tmp_path / "out")
    assert kept.column("id").to_pylist() == EXPECTED_KEPT  # and in input order
    rejected = read_output(tmp_path / "rejected")
    with_id = {
        i: r
        for i, r in zip(rejected.column("id").to_pylist(), rejected.column("_reason").to_pylist(), strict=True)
        if i is not None
    }
    assert with_id == EXPECTED_REJECTED
    metrics = json.loads((tmp_path / "out" / "_mdf" / "metrics.json").read_text())
    assert metrics["rows_read"] == len(EXPECTED_KEPT) + len(EXPECTED_REJECTED) + reader_rejects
    assert metrics["rows_written"] == len(EXPECTED_KEPT) and metrics["balanced"]
    assert rejected.num_rows == len(EXPECTED_REJECTED) + reader_rejects


def test_jsonl_recipe_keeps_exactly_the_right_rows(tmp_path, mdf):
    result = mdf("run", str(write_recipe(tmp_path, {"type": "jsonl", "paths": [str(DATA)]})))
    assert result.returncode == 0, result.stderr
    check_outputs(tmp_path, reader_rejects=2)
    rejected = read_output(tmp_path / "rejected")
    reader_reasons = sorted(r for r in rejected.column("_reason").to_pylist() if r.startswith("reader:"))
    assert [r.split(":")[1].split(" ")[0] for r in reader_reasons] == ["bad_json", "invalid_utf8"]
    assert "url_filter" in result.stdout and "balanced" in result.stdout


def test_parquet_recipe_keeps_exactly_the_right_rows(tmp_path, mdf):
    src = tmp_path / "in"
    src.mkdir()
    records = good_records()
    pq.write_table(pa.Table.from_pylist(records[:7]), src / "cc-a.parquet")
    pq.write_table(pa.Table.from_pylist(records[7:]), src / "cc-b.parquet", row_group_size=3)
    recipe = write_recipe(tmp_path, {"type": "parquet", "paths": [str(src / "*.parquet")]})
    result = mdf("run", str(recipe), "--set", "executor.batch_rows=2")
    assert result.returncode == 0, result.stderr
    check_outputs(tmp_path, reader_rejects=0)
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["_mdf", "cc-a.parquet", "cc-b.parquet"]  # _mdf: run record, lock, manifest, metrics, report


def test_typo_in_recipe_exits_2_with_did_you_mean_and_writes_nothing(tmp_path, mdf):
    recipe = write_recipe(tmp_path, {"type": "jsonl", "paths": [str(DATA)]})
    text = recipe.read_text().replace("text_length_filter", "text_lenght_filter")
    recipe.write_text(text)
    for cmd in ("run", "validate"):
        result = mdf(cmd, str(recipe))
        assert result.returncode == 2, result
        assert result.stderr.strip() == (
            "error: stages[0].operators[1]: unknown operator 'text_lenght_filter'; did you mean 'text_length_filter'?"
        )
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "rejected").exists()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "stages[0].operators[1].min_length=lots",
            "stages[0].operators[1].min_length: Input should be a valid integer",
        ),
        ("stages[0].operators[1].minimum=3", "stages[0].operators[1].minimum: unknown key 'minimum'; allowed:"),
        ("reader.paths=[/nonexistent/*.jsonl]", "reader.paths[0]: no input file matches '/nonexistent/*.jsonl'"),
        ("executor.type=spark", "executor.type: unknown executor 'spark'; known: inline, ray"),
    ],
)
def test_bad_recipe_values_exit_2_naming_the_path(tmp_path, mdf, override, message):
    recipe = write_recipe(tmp_path, {"type": "jsonl", "paths": [str(DATA)]})
    result = mdf("run", str(recipe), "--set", override)
    assert result.returncode == 2
    assert result.stderr.startswith("error: " + message), result.stderr
    assert not (tmp_path / "out").exists()


def test_validate_reports_shards(tmp_path, mdf):
    result = mdf("validate", str(write_recipe(tmp_path, {"type": "jsonl", "paths": [str(DATA)]})))
    assert result.returncode == 0 and "1 input shard(s)" in result.stdout


def test_ops_plugins_and_disabling(mdf):
    ops = mdf("ops", "--json")
    by_name = {o["name"]: o for o in json.loads(ops.stdout)}
    assert by_name["text_length_filter"]["plugin"] == "text"
    params = {p["name"]: p for p in by_name["text_length_filter"]["params"]}
    assert params["min_length"]["type"] == "int" and params["min_length"]["default"] == 0
    plugins = {p["name"]: p for p in json.loads(mdf("plugins", "--json").stdout)}
    assert plugins["text"]["distribution"] == "mdf-text"
    assert {"text_length_filter", "url_filter"} <= set(plugins["text"]["contributed"]["operators"])
    disabled = mdf("ops", "--json", env={"MDF_DISABLE_PLUGINS": "text"})
    assert "text_length_filter" not in {o["name"] for o in json.loads(disabled.stdout)}
    assert mdf("--version").stdout.startswith("mdf, version ")


def test_demo_runs_the_example_recipe(tmp_path, mdf):
    shutil.copytree(Path(__file__).parents[1] / "examples", tmp_path / "examples")
    result = mdf("demo", "--rows", "3000", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "mdf-demo" / "out" / "_mdf" / "metrics.json").read_text())
    assert metrics["rows_read"] == 3000 and metrics["balanced"]
    reasons = {k for s in metrics["stages"] for op in s["operators"] for k in op["reasons"]}
    assert {"url_filter:blocked_domain", "text_length_filter:too_short"} <= reasons
