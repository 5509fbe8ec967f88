"""``mdf plan`` and ``batch_rows: auto`` end to end, on generated text and image Parquet sets."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

from mdf.batching import plan_batches, resolve_auto
from mdf.batching.rules import GB, MB
from mdf.cli import cli
from mdf.demo_data import DemoSpec, write_dataset, write_image_dataset
from mdf.errors import RecipeError
from mdf.plugins import load_plugins
from mdf.resolve import build_component, parse_recipe
from mdf.run import prepare

ROWS = 400


def write_images(out_dir, rows: int, files: int = 2, seed: int = 0) -> str:
    write_image_dataset(str(out_dir), rows, files, seed)
    return os.path.join(out_dir, "*.parquet")


def write_text(out_dir, rows: int) -> str:
    write_dataset(str(out_dir), DemoSpec(rows=rows, files=2))
    return os.path.join(out_dir, "*.parquet")


def recipe_dict(paths: str, out: str, reader: dict | None = None, **executor) -> dict:
    return {
        "reader": {"type": "parquet", "paths": [paths], **(reader or {})},
        "stages": [{"name": "pass", "operators": ["noop_refiner"]}],
        "writer": {"type": "parquet", "path": out, "row_group_rows": 64},
        "executor": {"type": "inline", **executor},
    }


def plan_for(paths: str, tmp_path, reader: dict | None = None, **kw):
    plugins = load_plugins()
    recipe = parse_recipe(recipe_dict(paths, str(tmp_path / "out"), reader), plugins=plugins)
    reader = build_component(plugins.readers, recipe.reader, "reader")
    return plan_batches(reader, reader.shards(), recipe, plugins, **kw)


@pytest.fixture(scope="module")
def image_glob(tmp_path_factory):
    return write_images(tmp_path_factory.mktemp("images"), ROWS)


@pytest.fixture(scope="module")
def text_glob(tmp_path_factory):
    return write_text(tmp_path_factory.mktemp("text"), ROWS)


def test_images_get_fewer_rows_per_batch_than_text(image_glob, text_glob, tmp_path):
    image = plan_for(image_glob, tmp_path, {"modality": "image"}, available_bytes=32 * GB, cores=2)
    text = plan_for(text_glob, tmp_path, available_bytes=32 * GB, cores=2)
    assert (image.modality, text.modality) == ("image", "text")
    assert image.rows_total == text.rows_total == ROWS and image.rows_sampled == ROWS  # < 1,000: all rows
    assert image.batch_rows < text.batch_rows
    # real bytes vs the seed's chars x 2: an image row is ~50-300 KB, its id string a few bytes
    assert 50_000 < image.p90_bytes < 310_000 and image.seed_estimate_bytes < 100
    assert image.declared_by == ["reader parquet"] and text.declared_by == []
    assert image.rule("modality").reason.startswith("image (declared by reader parquet): memory x5")
    # 64 MB / (P90 x 5 x 2 x (3 + 0.1)): a handful of rows
    assert image.batch_rows == int(64 * MB / (image.p90_bytes * 5 * 2 * 3.1))


def test_a_parquet_of_jpegs_is_text_until_someone_declares_images(image_glob, tmp_path):
    """The bytes are JPEGs either way; what they cost depends on whether anything decodes them, which only the
    recipe can say: undeclared, the plan is a text plan and its modality rule says that nothing declared."""
    kw = {"available_bytes": 32 * GB, "cores": 2}
    undeclared = plan_for(image_glob, tmp_path, **kw)
    declared = plan_for(image_glob, tmp_path, {"modality": "image"}, **kw)
    assert (undeclared.modality, declared.modality) == ("text", "image")
    reason = undeclared.rule("modality").reason
    assert reason.startswith("text (nothing declares a modality: reader parquet does not say")
    assert "set reader modality" in reason
    assert undeclared.p90_bytes == declared.p90_bytes  # same sample, same bytes: only the multiplier differs
    assert declared.batch_rows < undeclared.batch_rows
    with pytest.raises(RecipeError, match="unknown modality 'imgae'; did you mean 'image'"):
        plan_for(image_glob, tmp_path, {"modality": "imgae"}, **kw)


def test_plan_cli_json_and_table(text_glob, tmp_path):
    recipe = tmp_path / "text.yaml"
    recipe.write_text(yaml.safe_dump(recipe_dict(text_glob, str(tmp_path / "out"))))
    result = CliRunner().invoke(cli, ["plan", str(recipe), "--json", "--memory-gb", "20", "--cores", "4"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    for key in ("modality", "rows_total", "rows_sampled", "p90_bytes", "seed_estimate_bytes", "skew", "tier_mb"):
        assert key in out
    assert out["tier_mb"] == 64 and out["cores"] == 4  # 20 GB: the 16-64 GB tier
    # two 200-row files, each one batch: 2 batches, fewer than int(4 x 0.75) = 3 workers, so 2
    assert (out["batches"], out["workers"], out["replicas"]) == (2, 2, {"pass": 2})
    fired = [r["rule"] for r in out["rules"]]
    assert {"sampling", "modality", "row_memory", "complexity", "memory_tier", "target_rows", "workers"} <= set(fired)
    table = CliRunner().invoke(cli, ["plan", str(recipe), "--measure"])
    assert table.exit_code == 0, table.output
    for choice in ("batch_rows", "batches", "workers", "max_in_flight", "replicas", "measured pass"):
        assert choice in table.output


def test_resolve_auto(text_glob, tmp_path):
    recipe = parse_recipe(recipe_dict(text_glob, str(tmp_path / "out")))
    plan = prepare(recipe)
    auto = recipe.model_copy(update={"executor": recipe.executor.model_copy(update={"batch_rows": "auto"})})
    expected = plan_for(text_glob, tmp_path, available_bytes=8 * GB, cores=2)
    assert resolve_auto(plan, auto, available_bytes=8 * GB, cores=2) == (expected.batch_rows, expected.max_in_flight)
    fixed = recipe.model_copy(update={"executor": recipe.executor.model_copy(update={"batch_rows": 50})})
    rows, in_flight = resolve_auto(plan, fixed, available_bytes=8 * GB, cores=2)
    assert rows == 50 and in_flight >= 1


def test_batch_rows_auto_in_a_recipe(text_glob, tmp_path, monkeypatch):
    """``batch_rows: auto`` is accepted and resolved through the planner.

    It used to skip on a ``RecipeError`` ("not accepted yet"), so a regression that refused ``auto`` showed as a
    skip; seen red now by making ``ExecutorSpec.batch_rows`` an ``int`` only: the parse raises and the test fails.
    Free memory is fixed for the test: ``prepare`` and the check each read it, and the batch size steps at 16 GiB
    free (3,830 rows below, 7,660 above, on this data), so a machine near that line could answer differently."""
    import mdf.batching.planner as planner

    monkeypatch.setattr(planner, "available_memory_bytes", lambda: 8 * GB)
    recipe = parse_recipe(recipe_dict(text_glob, str(tmp_path / "out"), batch_rows="auto"))
    plan = prepare(recipe)
    assert plan.batch_rows == resolve_auto(plan, recipe)[0]


def _measure_run(recipe_path) -> tuple[int, int]:
    """(peak RSS, peak Arrow allocation) in bytes of ``mdf run`` in a fresh process.

    The wrapper process only spawns the run, so ``RUSAGE_CHILDREN`` sees that one child and nothing else
    the test session ran. The child records Arrow's pool high-water mark at exit.
    """
    arrow_file = f"{recipe_path}.arrow-peak"
    child = (
        "import atexit, sys, pyarrow as pa\n"
        "from mdf.cli import main\n"
        "peak_file = sys.argv.pop()\n"
        "atexit.register(lambda: open(peak_file, 'w').write(str(pa.default_memory_pool().max_memory())))\n"
        "main()\n"
    )
    wrapper = (
        "import resource, subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', sys.argv[1], 'run', '-q', sys.argv[2], sys.argv[3]], check=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"  # KiB on Linux
    )
    # mimalloc (Arrow's default pool here) keeps freed pages for a while; a run that must stay under a memory
    # ceiling sets MIMALLOC_PURGE_DELAY=0 (README: ~10% more CPU on W1), so the test measures that setting, in a
    # user's environment: without the MIMALLOC_PURGE_DECOMMITS=0 this session got from importing mdf.cli (with it
    # freed pages are MADV_FREE'd and stay in RSS: seen red, RSS grew 139 MB over the 64 MB plan)
    env = {k: v for k, v in os.environ.items() if k != "MIMALLOC_PURGE_DECOMMITS"}
    env["MIMALLOC_PURGE_DELAY"] = "0"
    out = subprocess.run(
        [sys.executable, "-c", wrapper, child, str(recipe_path), arrow_file], capture_output=True, env=env
    )
    assert out.returncode == 0, out.stderr.decode()
    with open(arrow_file) as f:
        return int(out.stdout.split()[-1]) * 1024, int(f.read())


@pytest.fixture(scope="module")
def runs(image_glob, tmp_path_factory):
    """The image set run with the planned batch size, the default 8,192, and a one-row baseline."""
    tmp = tmp_path_factory.mktemp("runs")
    plan = plan_for(image_glob, tmp, {"modality": "image"}, available_bytes=32 * GB, cores=2)  # 64 MB on any machine
    (tmp / "one").mkdir()
    pq.write_table(pq.read_table(image_glob.replace("*", "img-00000")).slice(0, 1), tmp / "one" / "one.parquet")

    def run(paths: str, name: str, rows: int) -> tuple[int, int]:
        path = tmp / f"{name}.yaml"
        # one worker thread: the planned size bounds one pipeline's data (read-ahead, operators, writer);
        # with workers: N the inline executor runs N such pipelines at once
        path.write_text(yaml.safe_dump(recipe_dict(paths, str(tmp / name), batch_rows=rows, workers=1)))
        return _measure_run(path)

    base_rss, base_arrow = run(str(tmp / "one" / "*.parquet"), "baseline", plan.batch_rows)
    rss, arrow = run(image_glob, "planned", plan.batch_rows)
    _, default_arrow = run(image_glob, "default", 8192)
    print(
        f"\nbatch_rows {plan.batch_rows}, target {plan.batch_bytes / MB:.0f} MB: RSS {rss / MB:.0f} MB"
        f" (baseline {base_rss / MB:.0f}), Arrow peak {arrow / MB:.1f} MB (baseline {base_arrow / MB:.1f});"
        f" with 8,192 rows Arrow peaks at {default_arrow / MB:.0f} MB"
    )
    return plan, rss - base_rss, arrow - base_arrow, default_arrow - base_arrow


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss units are Linux's")
def test_a_run_with_the_planned_size_keeps_its_data_under_the_target(runs):
    """The memory batch sizing controls: Arrow's high-water mark (batches, reader buffers) above baseline.

    It must stay under the plan's batch target with the planned size, and must not with mdf's default
    8,192 rows (whole files in flight): the check can tell the two apart.
    """
    plan, _, arrow_growth, default_growth = runs
    assert arrow_growth <= plan.batch_bytes
    assert default_growth > plan.batch_bytes


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss units are Linux's")
def test_a_run_with_the_planned_size_stays_under_the_target_rss(runs):
    plan, rss_growth, _, _ = runs
    assert rss_growth <= plan.batch_bytes, f"RSS grew {rss_growth / MB:.0f} MB"
