"""The entry point registers every reader and operator under the mdf-image distribution, and each has a test."""

from __future__ import annotations

from pathlib import Path

from mdf.plugins import load_plugins

OPERATORS = {
    "image_metadata_refiner": "test_image_metadata.py",
    "image_technical_quality_refiner": "test_image_quality.py",
    "image_quality_filter": "test_image_quality.py",
    "image_phash_refiner": "test_image_phash.py",
    "image_embedding_refiner": "test_image_embedding.py",
    "image_near_dedup": "test_image_near_dedup.py",
}
READERS = ("image_folder", "laion_parquet", "webdataset")


def test_entry_point_registers_everything_owned_by_mdf_image():
    plugins = load_plugins()
    for name in OPERATORS:
        assert plugins.operators.owner(name).distribution == "mdf-image", name
    for name in READERS:
        assert plugins.readers.owner(name).distribution == "mdf-image", name
    ours = {n for n in plugins.operators.names() if plugins.operators.owner(n).distribution == "mdf-image"}
    assert ours == set(OPERATORS)


def test_every_operator_has_a_contract_check_in_its_test_module():
    here = Path(__file__).parent
    for name, module in OPERATORS.items():
        text = (here / module).read_text()
        cls = load_plugins().operators.get(name).__name__
        assert f"check_operator_contract({cls}(" in text, (name, module)
