"""Image readers: a folder of files, LAION-style Parquet, WebDataset tar shards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mdf import RecipeError

SAMPLE_DATA = "python -m mdf_image.testdata mdf-demo/image-data"
"""The command that writes sample images in every format the readers take (examples/image.yaml reads them)."""


@contextmanager
def sample_data_hint() -> Iterator[None]:
    """Say how to make sample images when a reader's paths match nothing: a first ``mdf run examples/image.yaml``
    meets this before anything else, and the generator is not on any path a newcomer would guess."""
    try:
        yield
    except RecipeError as exc:
        if not exc.detail.startswith("no "):
            raise
        hint = f"; for sample images run `{SAMPLE_DATA}` (needs pip install 'mdf-image[testdata]')"
        raise RecipeError(exc.detail + hint, exc.path) from None
