"""Issue 46, item 3: a secret an input URL carries is written nowhere.

Real runs over real WARC files (``../shared/data/warc``, one of them damaged, so the rejected output, the
damaged-input list of ``metrics.json`` and the report name a URL too) read through a loopback HTTP server with
Range support and through a presigned URL of a real SeaweedFS, inline and on a local Ray. Every file the run
wrote (part files, rejected part files, everything under ``_mdf/``) and what it printed are searched for each
secret, byte for byte.

Local paths carry no credentials (a file name is not a URL: nothing is parsed out of it), so there is no local
case here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
import pytest
import yaml

from .conftest import run_mdf

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]
pytest.importorskip("mdf_text")

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "warc"
GOOD, DAMAGED = "resili-warcfile.warc.gz", "resili-clipped.warc.gz"
SECRETS = ("s3cr3t-tok3n-4711", "pa55w0rd-0815", "d34dbeef-sig-99", "ap1-k3y-1234")


@pytest.fixture(scope="module")
def warc_server():
    if not (DATA / GOOD).is_file():
        pytest.skip(f"real WARC files not found at {DATA} (../shared/data/warc)")
    from tests.storage_servers import RangeServer

    server = RangeServer({"a.warc.gz": DATA / GOOD, "b.warc.gz": DATA / DAMAGED, "c.warc.gz": DATA / GOOD})
    yield server
    server.stop()


def recipe(tmp: Path, paths: list[str], executor: str) -> Path:
    spec = {
        "reader": {"type": "warc", "paths": paths},
        "stages": [{"name": "s", "operators": [{"text_length_filter": {"column": "url", "min_length": 30}}]}],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / "rej")},
        "executor": {"type": executor},
    }
    path = tmp / "recipe.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def leaks(folder: Path, secrets: tuple[str, ...]) -> list[str]:
    """``file: secret`` for each file under ``folder`` holding a secret (its bytes, any format)."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path.relative_to(folder)}: {s}" for s in secrets if s.encode() in data]
    return found


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_secrets_in_input_urls_are_written_nowhere(warc_server, tmp_path: Path, executor: str) -> None:
    """A token, a password in the userinfo, a presigned-style signature and an API key in the URLs of three
    WARC files (one damaged). Seen red on eefbc81: every secret in every row's ``warc_file``, the rejected
    row's ``_raw``, ``run.json``, ``metrics.json``, ``shards.json``, ``report.html``, ``run.log``, the part
    file names and the terminal's damaged-input line."""
    host = warc_server.url.split("://", 1)[1]
    paths = [
        f"http://{host}/a.warc.gz?token={SECRETS[0]}&lang=en",
        f"http://reader:{SECRETS[1]}@{host}/b.warc.gz",
        f"http://{host}/c.warc.gz?X-Amz-Signature={SECRETS[2]}&api_key={SECRETS[3]}",
    ]
    result = run_mdf("run", str(recipe(tmp_path, paths, executor)))
    assert result.returncode == 0, result.stderr[-3000:]
    assert leaks(tmp_path / "out", SECRETS) == [] and leaks(tmp_path / "rej", SECRETS) == []
    said = result.stdout + result.stderr
    assert not [s for s in SECRETS if s in said], said[-3000:]
    # the rest of each URL is kept: the lineage still names the objects
    files = set(pq.read_table(tmp_path / "out").column("warc_file").to_pylist())
    assert files == {
        f"http://{host}/a.warc.gz?token=***&lang=en",
        f"http://{host}/c.warc.gz?X-Amz-Signature=***&api_key=***",
    }
    damaged = json.loads((tmp_path / "out" / "_mdf" / "metrics.json").read_text())["damaged_inputs"]
    assert [d["file"] for d in damaged] == [f"http://***@{host}/b.warc.gz"]
    assert f"damaged input: http://***@{host}/b.warc.gz" in said


@pytest.mark.parametrize("signing", ["s3v4", "s3"])
def test_a_presigned_s3_url_is_read_and_its_signature_written_nowhere(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path, signing: str
) -> None:
    """A real presigned GET URL of SeaweedFS, SigV4 (``X-Amz-Credential`` names the access key,
    ``X-Amz-Signature`` is the secret) and SigV2 (``AWSAccessKeyId``, ``Signature``). Seen red on eefbc81: the
    signature in ``warc_file``, ``run.json``, ``shards.json``, ``metrics.json``, ``report.html``, ``run.log``."""
    import boto3
    from botocore.config import Config

    if not (DATA / GOOD).is_file():
        pytest.skip(f"real WARC files not found at {DATA}")
    ep = seaweed.endpoint
    assert ep is not None
    client = boto3.client("s3", endpoint_url=ep.url, aws_access_key_id=ep.access_key,
                          aws_secret_access_key=ep.secret_key, region_name=ep.region,
                          config=Config(signature_version=signing))  # fmt: skip
    client.put_object(Bucket=bucket, Key="crawl/a.warc.gz", Body=(DATA / GOOD).read_bytes())
    url = client.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "crawl/a.warc.gz"})
    query = dict(p.split("=", 1) for p in url.split("?", 1)[1].split("&"))
    names = ("X-Amz-Signature", "X-Amz-Credential") if signing == "s3v4" else ("Signature", "AWSAccessKeyId")
    secrets = tuple(query[n] for n in names)
    result = run_mdf("run", str(recipe(tmp_path, [url], "inline")))
    assert result.returncode == 0, result.stderr[-3000:]
    assert leaks(tmp_path / "out", secrets) == [] and leaks(tmp_path / "rej", secrets) == []
    assert not [s for s in secrets if s in result.stdout + result.stderr]
    (warc_file,) = set(pq.read_table(tmp_path / "out").column("warc_file").to_pylist())
    assert warc_file.startswith(url.split("?")[0] + "?") and all(f"{n}=***" in warc_file for n in names)


def test_a_failing_url_names_the_object_without_its_secret(warc_server, tmp_path: Path) -> None:
    """A URL that is not there: one line naming it without the token, exit 2. Seen red on eefbc81: the token in
    the error line."""
    host = warc_server.url.split("://", 1)[1]
    result = run_mdf("run", str(recipe(tmp_path, [f"http://{host}/missing.warc.gz?token={SECRETS[0]}"], "inline")))
    assert result.returncode == 2, result.stderr
    assert SECRETS[0] not in result.stderr and f"http://{host}/missing.warc.gz?token=***" in result.stderr
