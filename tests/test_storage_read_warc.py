"""`mdf run` on the real WARC files of ``../shared/data/warc`` read from SeaweedFS (``s3://``), from a loopback
HTTP server with Range support (``http://``, what ``https://data.commoncrawl.org/`` is), and named by a
CommonCrawl listing (``warc.paths.gz`` + base + slice): the rows must be exactly those of the local run."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
import pytest
import yaml

from .conftest import run_mdf

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "warc"
TYPES = ["response", "resource", "request", "metadata", "warcinfo"]
PREFIX = "crawl-data/CC-MAIN-2020-34/segments/1596439735792.85/warc"


@pytest.fixture(scope="module")
def warc_files() -> list[Path]:
    if not DATA.is_dir():
        pytest.skip(f"real WARC files not found at {DATA} (../shared/data/warc)")
    return sorted(p for p in DATA.iterdir() if p.name.endswith(".warc.gz"))


def recipe(tmp: Path, reader: dict) -> Path:
    spec = {
        "reader": {"type": "warc", "record_types": TYPES, **reader},
        "stages": [{"name": "s", "operators": [{"text_length_filter": {"column": "url", "min_length": 0}}]}],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / "rej")},
        "executor": {"type": "inline"},
    }
    path = tmp / "recipe.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def rows(folder: Path) -> dict[str, list[dict]]:
    """Part file -> its rows, without the columns that name the input file (a path here, a URL there)."""
    out = {}
    for part in sorted(folder.glob("*.parquet")):
        table = pq.read_table(part)
        keep = [c for c in table.column_names if c not in ("warc_file", "_raw")]
        out[part.name] = table.select(keep).to_pylist()
    return out


def run(tmp: Path, reader: dict, env: dict[str, str] | None = None) -> tuple[dict, dict]:
    tmp.mkdir(parents=True, exist_ok=True)
    result = run_mdf("run", str(recipe(tmp, reader)), env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return rows(tmp / "out"), rows(tmp / "rej")


@pytest.fixture(scope="module")
def local_rows(warc_files: list[Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    kept, rejected = run(tmp_path_factory.mktemp("local"), {"paths": [str(DATA / "*.warc.gz")]})
    assert sum(map(len, kept.values())) >= 60 and rejected  # resili-clipped.warc.gz is damaged: one row says so
    return kept, rejected


@pytest.fixture(scope="module")
def http_server(warc_files: list[Path], tmp_path_factory: pytest.TempPathFactory):
    """A CommonCrawl look-alike over HTTP with ranges: ``warc.paths.gz`` and the objects it lists."""
    from tests.storage_servers import RangeServer

    paths = tmp_path_factory.mktemp("cc") / "warc.paths.gz"
    keys = [f"{PREFIX}/{p.name}" for p in warc_files]
    paths.write_bytes(gzip.compress(("\n".join(keys) + "\n").encode()))
    server = RangeServer({"warc.paths.gz": paths, **{k: p for k, p in zip(keys, warc_files, strict=True)}})
    yield server
    server.stop()


def upload(seaweed: SeaweedS3, bucket: str, warc_files: list[Path]) -> None:
    client = seaweed.client()
    keys = [f"{PREFIX}/{p.name}" for p in warc_files]
    for key, p in zip(keys, warc_files, strict=True):
        client.put_object(Bucket=bucket, Key=key, Body=p.read_bytes())
    client.put_object(Bucket=bucket, Key="warc.paths.gz", Body=gzip.compress(("\n".join(keys) + "\n").encode()))


def test_s3_glob_gives_the_local_rows(seaweed: SeaweedS3, bucket: str, warc_files, local_rows, tmp_path) -> None:
    """Fails before the change: seen (exit 2, "no input file matches 's3://.../**/*.warc.gz'"): reader paths
    were local globs only. Damage in a remote stream (resili-clipped) is reported as in the local run."""
    upload(seaweed, bucket, warc_files)
    assert seaweed.endpoint is not None
    got = run(tmp_path, {"paths": [f"s3://{bucket}/crawl-data/**/*.warc.gz"]}, seaweed.endpoint.env())
    assert got == local_rows
    raw = pq.read_table(tmp_path / "rej" / "resili-clipped.parquet").column("_raw").to_pylist()
    assert any(f"s3://{bucket}/{PREFIX}/resili-clipped.warc.gz" in r for r in raw if r)


def test_http_urls_give_the_local_rows(http_server, warc_files, local_rows, tmp_path) -> None:
    """Fails before the change: seen (exit 2, no input file matches 'http://127.0.0.1:.../...')."""
    urls = [f"{http_server.url}/{PREFIX}/{p.name}" for p in warc_files]
    assert run(tmp_path, {"paths": urls}) == local_rows


def test_commoncrawl_listing_over_http_and_s3(
    seaweed: SeaweedS3, bucket: str, http_server, warc_files, local_rows, tmp_path
) -> None:
    """The ``commoncrawl:`` parameter: the whole listing gives the local rows (over HTTP and S3); a slice gives
    exactly its files. Fails before the change: seen (exit 2, "reader.commoncrawl: Extra inputs are not
    permitted")."""
    listing = {"paths_file": f"{http_server.url}/warc.paths.gz", "base": f"{http_server.url}/"}
    assert run(tmp_path / "http", {"commoncrawl": listing}) == local_rows
    upload(seaweed, bucket, warc_files)
    assert seaweed.endpoint is not None
    listing = {"paths_file": f"s3://{bucket}/warc.paths.gz", "base": f"s3://{bucket}/", "first": 1, "limit": 2}
    kept, rejected = run(tmp_path / "s3", {"commoncrawl": listing}, seaweed.endpoint.env())
    names = {p.name.removesuffix(".warc.gz") + ".parquet" for p in warc_files[1:3]}
    assert set(kept) | set(rejected) == names
    assert kept == {k: v for k, v in local_rows[0].items() if k in names}


def test_listing_naming_a_missing_object_is_one_line(http_server, warc_files, tmp_path) -> None:
    """A paths file whose key has no object: exit 2 before any work, one line naming the URL and the YAML path.
    Fails before the change: seen (the parameter did not exist: exit 2 on 'Extra inputs')."""
    paths = tmp_path / "warc.paths"
    paths.write_text(f"{PREFIX}/{warc_files[0].name}\n{PREFIX}/missing.warc.gz\n")
    listing = {"paths_file": str(paths), "base": f"{http_server.url}/"}
    result = run_mdf("run", str(recipe(tmp_path, {"commoncrawl": listing})))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert f"{PREFIX}/missing.warc.gz" in result.stderr and "reader.commoncrawl" in result.stderr
    assert not (tmp_path / "out").exists()


def test_paths_and_commoncrawl_together_is_a_recipe_error(tmp_path) -> None:
    result = run_mdf("run", str(recipe(tmp_path, {"paths": ["x.warc.gz"], "commoncrawl": {"paths_file": "p"}})))
    assert result.returncode == 2 and "exactly one of paths" in result.stderr, result.stderr
