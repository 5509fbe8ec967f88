"""CommonCrawl listings (``warc.paths.gz`` + base + slice) over a loopback HTTP server with Range support and
over S3, reading the real WARC files of ``../shared/data/warc`` in place."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mdf.errors import RecipeError
from mdf.storage import S3Settings, Storage, StorageSettings
from mdf.storage.commoncrawl import commoncrawl_urls, parse_listing

if TYPE_CHECKING:
    from tests.storage_servers import RangeServer, SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "warc"
PREFIX = "crawl-data/CC-MAIN-2020-34/segments/1596439735792.85/warc"


@pytest.fixture(scope="module")
def warc_files() -> list[Path]:
    if not DATA.is_dir():
        pytest.skip(f"real WARC files not found at {DATA} (../shared/data/warc)")
    return sorted(p for p in DATA.iterdir() if p.name.endswith((".warc.gz", ".warc")))


@pytest.fixture(scope="module")
def cc_server(warc_files: list[Path], tmp_path_factory: pytest.TempPathFactory):
    """A CommonCrawl look-alike: ``<crawl>/warc.paths.gz`` and the objects it lists, served with ranges."""
    from tests.storage_servers import RangeServer

    paths = tmp_path_factory.mktemp("cc") / "warc.paths.gz"
    keys = [f"{PREFIX}/{p.name}" for p in warc_files]
    paths.write_bytes(gzip.compress(("\n".join(keys) + "\n").encode()))
    files = {k: p for k, p in zip(keys, warc_files, strict=True)}
    files["crawl-data/CC-MAIN-2020-34/warc.paths.gz"] = paths
    server = RangeServer(files)
    yield server
    server.stop()


def test_listing_slices_and_reads_over_http(cc_server: RangeServer, warc_files: list[Path]) -> None:
    pytest.importorskip("fsspec", reason="http(s):// reads go through fsspec's HTTP file system")
    pytest.importorskip("aiohttp", reason="http(s):// reads go through fsspec's HTTP file system (aiohttp)")
    paths_file = f"{cc_server.url}/crawl-data/CC-MAIN-2020-34/warc.paths.gz"
    base = cc_server.url + "/"
    st = Storage()
    every = commoncrawl_urls({"paths_file": paths_file, "base": base}, st)
    assert every == [f"{base}{PREFIX}/{p.name}" for p in warc_files]
    assert commoncrawl_urls({"paths_file": paths_file, "base": base, "first": 2, "limit": 3}, st) == every[2:5]
    shards = [commoncrawl_urls({"paths_file": paths_file, "base": base, "shard": k, "of": 4}, st) for k in range(4)]
    assert [u for s in shards for u in s] == every and all(shards)  # contiguous blocks: disjoint, the whole crawl
    for url, local in zip(every, warc_files, strict=True):
        assert st.info(url).size == local.stat().st_size
        with st.open_input(url, block_size=4096) as f:  # many ranged requests for one file
            assert f.read() == local.read_bytes(), url


def test_warc_records_stream_from_http_like_from_disk(cc_server: RangeServer, warc_files: list[Path]) -> None:
    fastwarc = pytest.importorskip("fastwarc.warc", reason="mdf-text[web] brings FastWARC")
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    local = next(p for p in warc_files if p.name == "resili-warcfile.warc.gz")
    url = f"{cc_server.url}/{PREFIX}/{local.name}"

    def records(stream) -> list[tuple[str, int]]:
        return [(r.record_id, r.content_length) for r in fastwarc.ArchiveIterator(stream, parse_http=False)]

    with open(local, "rb") as f:
        expected = records(f)
    with Storage().open_input(url, block_size=16 << 10) as f:
        assert records(f) == expected and len(expected) == 50


def test_listing_on_s3(seaweed: SeaweedS3, bucket: str, warc_files: list[Path]) -> None:
    """A ``.gz`` object is stored as written. Fails with pyarrow's default ``compression="detect"`` on the output
    stream (seen: the paths file gzipped twice, 'UnicodeDecodeError: ... byte 0x8b')."""
    ep = seaweed.endpoint
    assert ep is not None
    st = Storage(StorageSettings(s3=S3Settings(endpoint_url=ep.url, access_key_id=ep.access_key,
                                               secret_access_key=ep.secret_key)))  # fmt: skip
    keys = [f"{PREFIX}/{p.name}" for p in warc_files[:3]]
    for key, p in zip(keys, warc_files, strict=False):
        st.put_file(str(p), f"s3://{bucket}/{key}")
    st.write_bytes(f"s3://{bucket}/wet.paths.gz", gzip.compress("\n".join(keys).encode()))
    got = commoncrawl_urls({"paths_file": f"s3://{bucket}/wet.paths.gz", "base": f"s3://{bucket}/", "limit": 2}, st)
    assert got == [f"s3://{bucket}/{k}" for k in keys[:2]]
    assert st.read_bytes(got[1]) == warc_files[1].read_bytes()


def test_bad_listings_name_the_yaml_path(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=r"^reader\.commoncrawl: .*shard and of go together"):
        parse_listing({"paths_file": "x", "shard": 1})
    with pytest.raises(RecipeError, match=r"^reader\.commoncrawl: shard 4 is not below of 4"):
        parse_listing({"paths_file": "x", "shard": 4, "of": 4})
    with pytest.raises(RecipeError, match=r"^reader\.commoncrawl\.limit: "):
        parse_listing({"paths_file": "x", "limit": 0})
    listing = tmp_path / "warc.paths"
    listing.write_text("a.warc.gz\nb.warc.gz\n")
    with pytest.raises(RecipeError, match="selects no file"):
        commoncrawl_urls({"paths_file": str(listing), "base": "s3://commoncrawl/", "first": 5})
    assert commoncrawl_urls({"paths_file": str(listing), "base": "s3://commoncrawl/"}) == [
        "s3://commoncrawl/a.warc.gz", "s3://commoncrawl/b.warc.gz"
    ]  # fmt: skip
