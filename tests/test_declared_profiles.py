"""A plugin brings a kind of data and a cost class core has never heard of, installed the way users install
plugins (an entry point of group ``mdf``), and ``mdf plan`` and ``mdf run`` size batches by them without any
edit to core. A plugin declaring a modality nobody registers is reported by ``mdf plugins``, not run blind."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from .conftest import run_mdf

PLUGIN = '''
import pyarrow.compute as pc

import mdf
from mdf import hookimpl


class PointCloud(mdf.Modality):
    """LiDAR sweeps: float32 xyz points decoded from a packed binary column."""

    name = "point_cloud"
    memory_multiplier = 12.0
    complexity = 4.0
    default_rows = 500
    max_rows = 2_500


class Voxelize(mdf.CostClass):
    """A voxel grid built per row."""

    name = "voxelize"
    weight = 0.7


class PointCountRefiner(mdf.Refiner):
    """Count the points of each cloud (12 bytes a point)."""

    name = "point_count_refiner"
    modality = "point_cloud"
    cost_class = "voxelize"
    reads = {"column": "binary"}
    writes = {"points": "integer"}

    class Params(mdf.Params):
        column: str = "cloud"

    def refine(self, batch):
        lengths = pc.binary_length(batch.column(self.params.column))
        return batch.append_column("points", pc.divide(lengths, 12))


@hookimpl
def mdf_register_modalities(registry):
    registry.add(PointCloud)


@hookimpl
def mdf_register_cost_classes(registry):
    registry.add(Voxelize)


@hookimpl
def mdf_register_operators(registry):
    registry.add(PointCountRefiner)
'''

BROKEN = '''
import mdf
from mdf import hookimpl


class HoloRefiner(mdf.Refiner):
    """Declares a modality no plugin registers."""

    name = "holo_refiner"
    modality = "hologram"

    def refine(self, batch):
        return batch


@hookimpl
def mdf_register_operators(registry):
    registry.add(HoloRefiner)
'''


def install(site: Path, package: str, source: str) -> dict[str, str]:
    """A plugin package and its dist-info (entry point ``mdf``) in ``site``; the env that puts it on the path."""
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text("")
    (site / package / "plugin.py").write_text(textwrap.dedent(source))
    dist = site / f"{package}-0.1.dist-info"
    dist.mkdir()
    name = package.replace("_", "-")
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[mdf]\n{package} = {package}.plugin\n")
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


@pytest.fixture(scope="module")
def clouds(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("clouds")
    env = install(tmp / "site", "mdf_pointcloud", PLUGIN)
    (tmp / "in").mkdir()
    clouds = pa.array([b"\x00" * 12 * (100 + i % 7) for i in range(300)], pa.binary())
    pq.write_table(pa.table({"id": range(300), "cloud": clouds}), tmp / "in" / "clouds.parquet")
    recipe = {
        "reader": {"type": "parquet", "paths": [str(tmp / "in")]},
        "stages": [{"name": "count", "operators": ["point_count_refiner"]}],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "executor": {"type": "inline", "batch_rows": "auto"},
    }
    (tmp / "recipe.yaml").write_text(yaml.safe_dump(recipe))
    return tmp, env


def test_a_plugin_modality_and_cost_class_size_the_plan(clouds):
    tmp, env = clouds
    result = run_mdf("plan", str(tmp / "recipe.yaml"), "--json", "--memory-gb", "8", "--cores", "2", env=env)
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["modality"] == "point_cloud" and plan["modality_declared_by"] == ["point_count_refiner"]
    rules = {r["rule"]: r for r in plan["rules"]}
    assert rules["modality"]["reason"].startswith("point_cloud (declared by point_count_refiner): memory x12")
    assert plan["complexity"] == pytest.approx(4.7)  # the modality's 4 + the voxelize class's 0.7
    # P90 payload 106 points x 12 + a 4-byte offset + an 8-byte id = 1,284 B; x 12 x 2 (safety) = 30,816 B a
    # row; 8 GB -> 32 MB: 33,554,432 / (30,816 x 4.7) = 231.7 rows, under point_cloud's 2,500 cap
    assert plan["p90_bytes"] == 1_284 and plan["row_memory_bytes"] == 30_816
    assert plan["batch_rows"] == 231


def test_a_plugin_modality_runs_end_to_end(clouds):
    tmp, env = clouds
    result = run_mdf("run", "-q", str(tmp / "recipe.yaml"), env=env)
    assert result.returncode == 0, result.stderr
    out = pq.read_table(tmp / "out").sort_by("id")
    assert out.num_rows == 300
    assert out.column("points").to_pylist() == [100 + i % 7 for i in range(300)]
    metrics = json.loads((tmp / "out" / "_mdf" / "metrics.json").read_text())
    assert metrics["batch_plan"]["modality"] == "point_cloud"


def test_a_modality_no_plugin_registers_is_a_load_error_of_its_plugin(tmp_path):
    env = install(tmp_path / "site", "mdf_holo", BROKEN)
    plugins = {p["name"]: p for p in json.loads(run_mdf("plugins", "--json", env=env).stdout)}
    error = plugins["mdf_holo"]["error"]
    assert "operator 'holo_refiner' declares modality = 'hologram', which no plugin registers" in error
    assert "known: audio, image, multimodal, text, video" in error and "mdf_register_modalities" in error
