"""Where a newcomer gets stuck on the image path: no data yet, and the sample-data generator without its extra."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mdf.errors import RecipeError
from mdf_image.io.folder import ImageFolderReader
from mdf_image.io.laion import LaionParquetReader
from mdf_image.io.webdataset import WebDatasetReader

GENERATOR = "python -m mdf_image.testdata mdf-demo/image-data"


@pytest.mark.parametrize("reader", [LaionParquetReader, ImageFolderReader, WebDatasetReader])
def test_a_reader_without_input_names_the_sample_data_command(tmp_path, reader):
    with pytest.raises(RecipeError) as exc:
        reader(paths=[str(tmp_path / "nothing" / "*.parquet")]).shards()
    assert exc.value.path.startswith("reader.paths") and exc.value.detail.startswith("no ")
    assert f"`{GENERATOR}`" in str(exc.value) and "pip install 'mdf-image[testdata]'" in str(exc.value)


def test_other_reader_errors_get_no_hint(tmp_path):
    (tmp_path / "a.parquet").write_bytes(b"not parquet")
    with pytest.raises(Exception) as exc:
        LaionParquetReader(paths=[str(tmp_path / "a.parquet")]).shards()
    assert "mdf_image.testdata" not in str(exc.value)


def test_testdata_without_its_extra_names_the_pip_line(tmp_path):
    hide = (
        "import importlib.util as u; find = u.find_spec; "
        "u.find_spec = lambda m, *a: None if m == 'skimage' else find(m, *a); "
        "from mdf_image.testdata import main; main([sys.argv[1]])"
    )
    r = subprocess.run([sys.executable, "-c", "import sys; " + hide, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    want = "error: python -m mdf_image.testdata needs scikit-image: pip install 'mdf-image[testdata]'"
    assert r.stderr.strip() == want
    assert not list(tmp_path.iterdir())
