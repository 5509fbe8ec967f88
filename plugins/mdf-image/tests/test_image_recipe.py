"""Whole runs through ``mdf``: bad inputs land in ``rejected:`` with their reasons on both executors, every row is
accounted for, each reader feeds a recipe, and examples/image.yaml validates and runs as its header says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pyarrow as pa
import pytest

from mdf.resolve import parse_recipe
from mdf.run import run_recipe
from mdf.testing import read_output
from mdf_image import testdata

ROOT = Path(__file__).resolve().parents[3]
CPU_OPS = [
    "image_metadata_refiner",
    {"image_technical_quality_refiner": {"max_side": 512}},
    {"image_quality_filter": {"min_width": 128, "min_height": 128, "min_sharpness": 10, "max_blockiness": 2.5}},
    "image_phash_refiner",
]
# the first operator that reads a bad input names it; a header-only read cannot see the cut-off JPEG
FIRST_REJECTER = {"bad/truncated_jpeg": "image_technical_quality_refiner"}


def recipe(tmp: Path, reader: dict, executor: dict, extra_stages: list | None = None) -> dict:
    return {
        "reader": reader,
        "stages": [{"name": "images", "operators": CPU_OPS}, *(extra_stages or [])],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / "rejected")},
        "executor": executor,
    }


def check_run(tmp: Path, mixed: pa.Table, reader_reasons: dict[str, str] | None = None) -> tuple[pa.Table, pa.Table]:
    """Every input row is kept or rejected exactly once; bad inputs are rejected with their expected reason."""
    kept, rejected = read_output(tmp / "out"), read_output(tmp / "rejected")
    kept_ids, rej_ids = kept.column("id").to_pylist(), rejected.column("id").to_pylist()
    expected_ids = [i.removesuffix(".jpg").removesuffix(".png") for i in mixed.column("id").to_pylist()]
    assert sorted(kept_ids + rej_ids) == sorted(expected_ids + list(reader_reasons or {}))
    reasons = dict(zip(rej_ids, rejected.column("_reason").to_pylist(), strict=True))
    for key, want in zip(mixed["id"].to_pylist(), mixed["expected_reason"].to_pylist(), strict=True):
        if want is not None:
            op = FIRST_REJECTER.get(key, "image_metadata_refiner")
            assert reasons[key].startswith(f"{op}:{want}"), (key, reasons[key])
    for key, want in (reader_reasons or {}).items():
        assert reasons[key] == want
    photo_reasons = [r for k, r in reasons.items() if not k.startswith("bad/") and k not in (reader_reasons or {})]
    others = {r.split(":")[0] for r in photo_reasons}
    assert others <= {"image_quality_filter"}  # a real photo is only ever dropped by a threshold
    assert "phash" in kept.column_names and kept.column("phash").null_count == 0
    metrics = json.loads((tmp / "out" / "_mdf" / "metrics.json").read_text())
    assert metrics["balanced"] and metrics["rows_read"] == kept.num_rows + rejected.num_rows
    return kept, rejected


@pytest.fixture(scope="module")
def data(tmp_path_factory, mixed) -> dict[str, str]:
    root = tmp_path_factory.mktemp("data")
    half = mixed.num_rows // 2
    testdata.write_laion_parquet(mixed.slice(0, half), str(root / "laion" / "a.parquet"), row_group_rows=8)
    testdata.write_laion_parquet(mixed.slice(half), str(root / "laion" / "b.parquet"), row_group_rows=8)
    testdata.write_image_folder(mixed, str(root / "folder"))
    tars = testdata.write_webdataset(mixed, str(root / "wds"), samples_per_tar=40)
    with tarfile.open(tars[-1], "a") as tar:  # a key with a caption and no image
        testdata.add_member(tar, "orphan/0001.txt", b"caption without an image")
    return {"laion": str(root / "laion"), "folder": str(root / "folder"), "wds": str(root / "wds")}


def test_laion_parquet_inline(tmp_path, data, mixed):
    reader = {"type": "laion_parquet", "paths": [data["laion"]], "id_column": "id", "row_groups_per_shard": 3}
    run_recipe(parse_recipe(recipe(tmp_path, reader, {"type": "inline", "batch_rows": 16})))
    check_run(tmp_path, mixed)


def test_image_folder_inline(tmp_path, data, mixed):
    reader = {"type": "image_folder", "paths": [data["folder"]], "files_per_shard": 25}
    run_recipe(parse_recipe(recipe(tmp_path, reader, {"type": "inline", "batch_rows": 16})))
    kept = read_output(tmp_path / "out")
    ids = {os.path.splitext(i)[0] for i in kept.column("id").to_pylist()}
    rejected = read_output(tmp_path / "rejected")
    rej = {
        os.path.splitext(i)[0]: r
        for i, r in zip(rejected["id"].to_pylist(), rejected["_reason"].to_pylist(), strict=True)
    }
    assert sorted([*ids, *rej]) == sorted(mixed.column("id").to_pylist())
    bad = {k: v for k, v in zip(mixed["id"].to_pylist(), mixed["expected_reason"].to_pylist(), strict=True) if v}
    for key, want in bad.items():
        assert rej[key].startswith(f"{FIRST_REJECTER.get(key, 'image_metadata_refiner')}:{want}"), (key, rej[key])


def test_webdataset_inline_rejects_the_imageless_key(tmp_path, data, mixed):
    reader = {"type": "webdataset", "paths": [data["wds"]]}
    run_recipe(parse_recipe(recipe(tmp_path, reader, {"type": "inline", "batch_rows": 16})))
    _, rejected = check_run(tmp_path, mixed, reader_reasons={"orphan/0001": "reader:missing_image"})
    assert rejected.filter(pa.compute.equal(rejected["id"], "orphan/0001"))["caption"].to_pylist() == [
        "caption without an image"
    ]


def test_ray_same_rows_as_inline_with_many_shards_and_loaders(tmp_path, data, mixed, local_ray):
    pytest.importorskip("ray")
    reader = {"type": "laion_parquet", "paths": [data["laion"]], "id_column": "id", "row_groups_per_shard": 1}
    for kind in ("inline", "ray"):
        executor = {"type": kind, "batch_rows": 8, **({"loaders": 2} if kind == "ray" else {})}
        run_recipe(parse_recipe(recipe(tmp_path / kind, reader, executor)))
        check_run(tmp_path / kind, mixed)
    for out in ("out", "rejected"):
        a, b = read_output(tmp_path / "inline" / out), read_output(tmp_path / "ray" / out)
        assert a.drop_columns(["image"]).to_pylist() == b.drop_columns(["image"]).to_pylist()


@pytest.mark.embeddings
def test_ray_embedding_stage_runs_on_cpu_when_the_recipe_asks_no_gpu(tmp_path, data, mixed, tiny_clip, local_ray):
    pytest.importorskip("ray")
    reader = {"type": "image_folder", "paths": [data["folder"]], "files_per_shard": 40}
    embed = {
        "name": "embed",
        "operators": [{"image_embedding_refiner": {"model_path": tiny_clip, "batch_size": 8}}],
        "resources": {"cpu": 1, "gpu": 0},
    }
    run_recipe(parse_recipe(recipe(tmp_path, reader, {"type": "ray", "batch_rows": 16}, [embed])))
    kept = read_output(tmp_path / "out")
    assert kept.num_rows > 90 and kept.schema.field("embedding").type == pa.list_(pa.float32(), 16)
    assert kept.column("embedding").null_count == 0


def run_mdf(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mdf.cli"]
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([*cmd, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_example_recipe_validates_and_runs_on_the_default_executor(tmp_path):
    """As examples/image.yaml's header says: generate the data, then ``mdf run`` (inline) from that folder."""
    gen = subprocess.run(
        [sys.executable, "-m", "mdf_image.testdata", "mdf-demo/image-data", "--formats", "laion"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert gen.returncode == 0, gen.stderr
    example = str(ROOT / "examples" / "image.yaml")
    validated = run_mdf("validate", example, cwd=tmp_path)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    done = run_mdf("run", example, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    kept, rejected = read_output(tmp_path / "mdf-demo/image-out"), read_output(tmp_path / "mdf-demo/image-rejected")
    metrics = json.loads((tmp_path / "mdf-demo/image-out/_mdf/metrics.json").read_text())
    assert metrics["executor"] == "inline" and metrics["balanced"]
    assert kept.num_rows + rejected.num_rows == testdata.example_set().num_rows
    bad_ids = set(testdata.bad_inputs().column("id").to_pylist())
    assert bad_ids <= set(rejected.column("id").to_pylist())
