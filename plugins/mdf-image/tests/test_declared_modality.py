"""The batch-size planner asks the reader and the recipe's operators what they hold, read and cost (declared,
never sniffed from the bytes)."""

from __future__ import annotations

import os

import pytest

from mdf import Refiner
from mdf.batching import plan_batches
from mdf.batching.planner import operator_costs
from mdf.demo_data import DemoSpec, write_dataset
from mdf.operators import is_declared
from mdf.plugins import load_plugins
from mdf.resolve import build_component, parse_recipe
from mdf_image import testdata
from mdf_image.ops.embedding import ImageEmbeddingRefiner
from mdf_image.ops.phash import ImagePhashRefiner


@pytest.fixture(scope="module")
def text_glob(tmp_path_factory):
    out = tmp_path_factory.mktemp("text")
    write_dataset(str(out), DemoSpec(rows=300, files=2))
    return os.path.join(out, "*.parquet")


def plan(text_glob, tmp_path, operators, reader=None):
    plugins = load_plugins()
    recipe = parse_recipe(
        {
            "reader": reader or {"type": "parquet", "paths": [text_glob]},
            "stages": [{"name": "s", "operators": operators}],
            "writer": {"type": "parquet", "path": str(tmp_path / "out")},
            "executor": {"type": "inline"},
        },
        plugins=plugins,
    )
    reader = build_component(plugins.readers, recipe.reader, "reader")
    return plan_batches(reader, reader.shards(), recipe, plugins, available_bytes=8 << 30, cores=2), recipe


def test_image_operators_make_the_plan_an_image_plan_without_sniffing(text_glob, tmp_path):
    declared, _ = plan(text_glob, tmp_path, ["image_phash_refiner"])
    undeclared, _ = plan(text_glob, tmp_path, ["noop_refiner"])  # nobody declares: text
    assert (declared.modality, undeclared.modality) == ("image", "text")
    assert declared.rule("modality").reason.startswith("image (declared by image_phash_refiner): memory x5")
    assert declared.declared_by == ["image_phash_refiner"] and declared.batch_rows < undeclared.batch_rows


def test_the_reader_and_the_operators_are_named_in_the_reason(tmp_path, variants):
    testdata.write_image_folder(variants, str(tmp_path / "img"))
    reader = {"type": "image_folder", "paths": [str(tmp_path / "img")]}
    p, _ = plan(None, tmp_path, ["image_metadata_refiner", "image_phash_refiner", "noop_refiner"], reader)
    assert p.modality == "image"
    assert p.rule("modality").reason.startswith(
        "image (declared by reader image_folder, image_metadata_refiner, image_phash_refiner): memory x5"
    )


def test_cost_class_is_declared_on_the_class_and_read_by_the_planner(text_glob, tmp_path):
    assert ImageEmbeddingRefiner.cost_class == "embedding" and ImagePhashRefiner.cost_class == "cleaning"
    assert is_declared(ImageEmbeddingRefiner, "cost_class") and not is_declared(ImagePhashRefiner, "cost_class")
    _, recipe = plan(text_glob, tmp_path, ["image_phash_refiner", {"image_quality_filter": {"min_width": 8}}])
    # a refiner and a filter at their kinds' defaults
    assert [c.weight for c in operator_costs(recipe, load_plugins())] == [0.1, 0.2]


def test_a_value_that_is_not_a_name_is_refused_when_the_class_is_defined():
    with pytest.raises(TypeError, match="modality = 5; name a registered modality"):

        class Bad(Refiner):
            name = "bad"
            modality = 5  # type: ignore[assignment]
