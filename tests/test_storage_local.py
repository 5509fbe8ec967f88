"""The storage layer on local paths (what every recipe uses today) and protocols that are not installed."""

from __future__ import annotations

import importlib.util
import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mdf.errors import MissingDependencyError
from mdf.storage import ObjectNotFound, S3Settings, Storage, StorageError, StorageSettings


def test_local_paths_behave_like_the_local_readers(tmp_path: Path) -> None:
    st = Storage()
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "_mdf").mkdir()
    for name in ("a/1.parquet", "a/b/2.parquet", "a/notes.txt", "_mdf/x.parquet"):
        pq.write_table(pa.table({"x": [1, 2]}), tmp_path / name)
    found = [o.url for o in st.expand([str(tmp_path)], extensions=(".parquet",))]
    assert found == [str(tmp_path / "a/1.parquet"), str(tmp_path / "a/b/2.parquet")]  # _mdf/ skipped
    assert [o.url for o in st.expand([f"{tmp_path}/**/*.parquet"])] == [
        str(tmp_path / n) for n in ("_mdf/x.parquet", "a/1.parquet", "a/b/2.parquet")
    ]  # a glob is taken as written, as glob.glob(recursive=True) does
    assert [o.url for o in st.expand([f"file://{tmp_path}/a/*.txt"])] == [str(tmp_path / "a/notes.txt")]
    assert pq.read_table(st.open_random(str(tmp_path / "a/1.parquet"))).num_rows == 2
    st.write_bytes(str(tmp_path / "new" / "obj.gz"), b"raw bytes")  # stored as written, folder created
    assert (tmp_path / "new" / "obj.gz").read_bytes() == b"raw bytes"
    assert [p.name for p in (tmp_path / "new").iterdir()] == ["obj.gz"]  # no temp file left
    with pytest.raises(ObjectNotFound, match=r"reader\.paths\[1\]"):
        st.expand([str(tmp_path), str(tmp_path / "missing*.parquet")])
    st.delete_prefix(str(tmp_path / "a"))
    assert st.list(str(tmp_path / "a")) == []


def test_missing_protocol_packages_name_the_pip_line() -> None:
    pytest.importorskip("fsspec", reason="other protocols go through fsspec")
    if importlib.util.find_spec("gcsfs") is not None:
        pytest.skip("gcsfs is installed here")
    with pytest.raises(MissingDependencyError, match=r"^gs://b/k: reading gs:// needs gcsfs: pip install gcsfs"):
        Storage().info("gs://b/k")


def test_https_is_read_only_and_storage_pickles_as_settings() -> None:
    with pytest.raises(StorageError, match=r"^https://example\.invalid/x: https:// is read only"):
        Storage().write_bytes("https://example.invalid/x", b"x")
    st = Storage(StorageSettings(s3=S3Settings(endpoint_url="http://127.0.0.1:1", secret_access_key="k")))
    back = pickle.loads(pickle.dumps(st))
    assert back.settings == st.settings and back.settings.s3.endpoint_url == "http://127.0.0.1:1"
