"""The partition planner asks the recipe's operators what they read and cost (declared, not sniffed)."""

from __future__ import annotations

import os

import pytest

from mdf import Refiner
from mdf.demo_data import DemoSpec, write_dataset
from mdf.partition import plan_partitions
from mdf.partition.planner import operator_costs
from mdf.plugins import load_plugins
from mdf.recipe import build_component, parse_recipe
from mdf_image.ops.embedding import ImageEmbeddingRefiner
from mdf_image.ops.phash import ImagePhashRefiner


@pytest.fixture(scope="module")
def text_glob(tmp_path_factory):
    out = tmp_path_factory.mktemp("text")
    write_dataset(str(out), DemoSpec(rows=300, files=2))
    return os.path.join(out, "*.parquet")


def plan(text_glob, tmp_path, operators):
    plugins = load_plugins()
    recipe = parse_recipe(
        {
            "reader": {"type": "parquet", "paths": [text_glob]},
            "stages": [{"name": "s", "operators": operators}],
            "writer": {"type": "parquet", "path": str(tmp_path / "out")},
            "executor": {"type": "inline"},
        },
        plugins=plugins,
    )
    reader = build_component(plugins.readers, recipe.reader, "reader")
    return plan_partitions(reader, reader.shards(), recipe, plugins, available_bytes=8 << 30, cores=2), recipe


def test_image_operators_make_the_plan_an_image_plan_without_sniffing(text_glob, tmp_path):
    declared, _ = plan(text_glob, tmp_path, ["image_phash_refiner"])
    sniffed, _ = plan(text_glob, tmp_path, ["noop_refiner"])  # nobody declares: the bytes say text
    assert (declared.modality, sniffed.modality) == ("image", "text")
    assert "declared by image_phash_refiner" in declared.rule("modality").reason
    assert declared.media_columns == {} and declared.batch_rows < sniffed.batch_rows


def test_cost_class_is_declared_on_the_class_and_read_by_the_planner(text_glob, tmp_path):
    assert ImageEmbeddingRefiner.cost_class == "embedding" and ImagePhashRefiner.cost_class is None
    _, recipe = plan(text_glob, tmp_path, ["image_phash_refiner"])
    assert [c.weight for c in operator_costs(recipe, load_plugins())] == [0.1]  # a refiner by its kind


def test_an_undeclared_value_is_refused_when_the_class_is_defined():
    with pytest.raises(TypeError, match="modality = 'pictures'; use one of text, image, audio, video"):

        class Bad(Refiner):
            name = "bad"
            modality = "pictures"  # type: ignore[assignment]
