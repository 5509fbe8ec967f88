"""The recipe's ``storage:`` block: the endpoint and keys given only there reach the reader, in the driver and in
Ray's actors, and the secret never reaches ``run.json``, ``run.log``, ``metrics.json``, the report or the terminal.

Fails with the Ray actors not applying the settings (``_set_up_process`` not configuring storage): seen (the
loader, with no endpoint in its environment, failed; its StorageError did not even unpickle on the driver, so Ray
printed ``UnserializableException``: fixed too, ``core/tests/test_storage_errors.py``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from .conftest import run_mdf

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]

AWS_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_REGION")


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_storage_block_alone_reaches_every_process_and_hides_the_secret(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path, executor: str
) -> None:
    if executor == "ray":
        pytest.importorskip("ray")
    endpoint = seaweed.endpoint
    assert endpoint is not None
    rows = pa.table({"id": list(range(500)), "text": [f"text number {i} " * (1 + i % 5) for i in range(500)]})
    pq.write_table(rows, tmp_path / "x.parquet")
    seaweed.client().put_object(Bucket=bucket, Key="in/x.parquet", Body=(tmp_path / "x.parquet").read_bytes())
    spec = {
        "reader": {"type": "parquet", "paths": [f"s3://{bucket}/in/*.parquet"]},
        "stages": [{"name": "s", "operators": [{"text_length_filter": {"min_length": 30}}]}],
        "writer": {"type": "parquet", "path": str(tmp_path / "out")},
        "rejected": {"type": "parquet", "path": str(tmp_path / "rej")},
        "executor": {"type": executor, "batch_rows": 100},
        "storage": {"s3": {"endpoint_url": endpoint.url, "region": endpoint.region,
                           "access_key_id": endpoint.access_key, "secret_access_key": endpoint.secret_key}},
    }  # fmt: skip
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(spec))
    env = {k: v for k, v in os.environ.items() if k not in AWS_VARS}  # the block is the only source
    env["AWS_CONFIG_FILE"] = env["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "none")
    result = run_mdf("run", str(recipe), env=env, replace_env=True)
    assert result.returncode == 0, result.stderr[-3000:]
    kept = pq.read_table(tmp_path / "out").num_rows
    assert kept + pq.read_table(tmp_path / "rej").num_rows == 500 and kept > 0
    meta = tmp_path / "out" / "_mdf"
    secret = endpoint.secret_key
    for path in [*meta.rglob("*"), tmp_path / "rej" / "_mdf" / "run.json"]:
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), f"the secret key is in {path}"
    assert secret not in result.stdout + result.stderr
    assert "**********" in (meta / "run.json").read_text()  # the block is recorded, its secrets masked


def test_a_bad_storage_key_is_one_line_naming_it(tmp_path: Path) -> None:
    """A typo in the block fails before any work, exit 2, naming ``storage.s3.<key>``; a secret's value is never
    echoed."""
    spec = {
        "reader": {"type": "parquet", "paths": [str(tmp_path)]},
        "stages": [{"name": "s", "operators": [{"text_length_filter": {"min_length": 3}}]}],
        "writer": {"type": "parquet", "path": str(tmp_path / "out")},
        "storage": {"s3": {"endpoint": "http://x", "secret_access_key": 987654321}},
    }
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(spec))
    result = run_mdf("validate", str(recipe))
    assert result.returncode == 2, result.stderr
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and "storage.s3" in err and "987654321" not in err, err
