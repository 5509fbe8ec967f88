"""Fixtures: real photographs (scikit-image's, encoded by Pillow) as Arrow tables, built once per session."""

from __future__ import annotations

import os

# a Ray started by these tests binds to 127.0.0.1 only; must be set before ray is imported anywhere
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import pyarrow as pa
import pytest

from mdf_image import testdata


@pytest.fixture(scope="session")
def photos() -> pa.Table:
    """Near-duplicate groups and distinct negatives (see :func:`mdf_image.testdata.near_duplicate_set`)."""
    return testdata.near_duplicate_set()


@pytest.fixture(scope="session")
def bad() -> pa.Table:
    return testdata.bad_inputs()


@pytest.fixture(scope="session")
def variants() -> pa.Table:
    return testdata.format_variants()


@pytest.fixture(scope="session")
def mixed() -> pa.Table:
    """Photos then bad inputs: ``id``, ``image``, ``expected_reason`` (null for good rows), ..."""
    return testdata.example_set(bad=True)


@pytest.fixture(scope="session")
def tiny_clip(tmp_path_factory) -> str:
    """A randomly initialised CLIP vision tower (hidden size 32) and its image processor, saved like a real one.

    The embedding refiner loads it through the same ``from_pretrained(local_files_only=True)`` code as a real
    checkpoint; the weights are random, so tests compare against the model run directly, not against meaning.
    """
    pytest.importorskip("torch", reason="image_embedding_refiner needs torch: pip install 'mdf-image[embeddings]'")
    transformers = pytest.importorskip("transformers", reason="needs transformers: pip install 'mdf-image[embeddings]'")
    import torch

    torch.manual_seed(0)
    config = transformers.CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=4,
        image_size=32,
        patch_size=8,
        projection_dim=16,
    )
    path = tmp_path_factory.mktemp("tiny-clip")
    transformers.CLIPVisionModelWithProjection(config).save_pretrained(path)
    processor = transformers.CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor.save_pretrained(path)
    return str(path)
