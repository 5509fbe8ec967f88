"""The storage layer against a real S3 server (SeaweedFS), with and without a fault-injecting proxy in front."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mdf.errors import MdfError
from mdf.storage import ObjectNotFound, S3Settings, Storage, StorageError, StorageSettings

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]  # the seaweed, bucket and make_proxy fixtures


def s3_storage(server: SeaweedS3, endpoint: str | None = None, attempts: int = 8) -> Storage:
    assert server.endpoint is not None
    ep = server.endpoint
    s3 = S3Settings(
        endpoint_url=endpoint or ep.url, access_key_id=ep.access_key, secret_access_key=ep.secret_key,
        max_attempts=attempts, connect_timeout_s=2, request_timeout_s=20,
    )  # fmt: skip
    return Storage(StorageSettings(s3=s3))


def _parquet(path: str, rows: int = 40_000, groups: int = 8) -> pa.Table:
    table = pa.table({"id": pa.array(range(rows), pa.int64()), "text": [f"row {i} " * 8 for i in range(rows)]})
    pq.write_table(table, path, row_group_size=rows // groups, compression="none")
    return table


def test_roundtrip_globs_and_listing(seaweed: SeaweedS3, bucket: str) -> None:
    st = s3_storage(seaweed)
    base = f"s3://{bucket}/data"
    for key in ("a/1.parquet", "a/b/2.parquet", "c/3.parquet", "c/notes.txt", "_mdf/lock", "a/.hidden/4.parquet"):
        st.write_bytes(f"{base}/{key}", key.encode())
    urls = [o.url for o in st.expand([f"{base}/**/*.parquet"])]
    # a glob is taken as written (hidden names included when the glob reaches them), sorted
    assert urls == [f"{base}/{k}" for k in ("a/.hidden/4.parquet", "a/1.parquet", "a/b/2.parquet", "c/3.parquet")]
    assert [o.url for o in st.expand([f"{base}/*/*.parquet"])] == [f"{base}/a/1.parquet", f"{base}/c/3.parquet"]
    # a prefix (folder) lists its non-hidden files with the reader's extensions, like a local folder
    assert [o.url for o in st.expand([base], extensions=(".parquet",))] == [
        f"{base}/a/1.parquet", f"{base}/a/b/2.parquet", f"{base}/c/3.parquet"
    ]  # fmt: skip
    assert st.info(f"{base}/c/notes.txt").size == len(b"c/notes.txt")
    assert st.read_bytes(f"{base}/a/b/2.parquet") == b"a/b/2.parquet"
    st.delete_prefix(f"{base}/a")
    assert [o.url for o in st.list(base, hidden=True)] == [
        f"{base}/_mdf/lock",
        f"{base}/c/3.parquet",
        f"{base}/c/notes.txt",
    ]


def test_endpoint_and_keys_from_the_standard_variables(seaweed: SeaweedS3, bucket: str, monkeypatch) -> None:
    """No ``storage:`` block: ``AWS_ENDPOINT_URL_S3`` and the credential chain (here the AWS_* variables)."""
    assert seaweed.endpoint is not None
    for k, v in seaweed.endpoint.env().items():
        monkeypatch.setenv(k, v)
    st = Storage()
    st.write_bytes(f"s3://{bucket}/x", b"env")
    assert st.read_bytes(f"s3://{bucket}/x") == b"env"


def test_parquet_reads_footer_and_one_row_group_by_range(seaweed: SeaweedS3, bucket: str, tmp_path, make_proxy) -> None:
    local = str(tmp_path / "t.parquet")
    table = _parquet(local)
    size = os.path.getsize(local)
    st = s3_storage(seaweed)
    url = f"s3://{bucket}/t.parquet"
    st.put_file(local, url)
    proxy = make_proxy()
    pf = pq.ParquetFile(s3_storage(seaweed, proxy.url).open_random(url))
    assert pf.metadata.num_row_groups == 8
    assert pf.read_row_group(5).equals(table.slice(25_000, 5_000))
    assert proxy.bytes_out < size / 3, (proxy.bytes_out, size)  # footer + one group, not the file
    assert pq.read_table(st.open_random(url)).equals(table)


def test_streamed_read_holds_one_block(seaweed: SeaweedS3, bucket: str, make_proxy) -> None:
    """A large object is read in ranged blocks of the stream's size, never fetched whole."""
    data = os.urandom(12 << 20)
    s3_storage(seaweed).write_bytes(f"s3://{bucket}/big.bin", data)  # multipart (pyarrow: parts of 10 MB)
    fault_proxy = make_proxy()
    st = s3_storage(seaweed, fault_proxy.url)
    out = bytearray()
    with st.open_input(f"s3://{bucket}/big.bin", block_size=1 << 20) as f:
        while piece := f.read(300_000):
            out += piece
    assert bytes(out) == data
    assert fault_proxy.max_body <= 1 << 20


def test_faults_every_read_and_write_completes_with_the_same_bytes(
    seaweed: SeaweedS3, bucket: str, tmp_path, make_proxy
) -> None:
    """20 % of requests answered 503 SlowDown and 2 % of responses cut by a TCP reset mid-body: every read
    returns the object's bytes, every write lands whole. Fails with our retries off (seen: 'write failed after
    1 tries: ... SLOW_DOWN during UploadPart') and with the resuming reader's retries off (seen: 'read at byte
    1835008 failed after 1 tries')."""
    local = str(tmp_path / "t.parquet")
    table = _parquet(local, rows=20_000, groups=4)
    blobs = {f"s3://{bucket}/blob{i}.bin": os.urandom((3 << 20) + i * 777) for i in range(4)}
    proxy = make_proxy(slowdown=0.20, reset=0.02, slow=0.02, seed=7)
    st = s3_storage(seaweed, proxy.url)
    for url, data in blobs.items():
        st.write_bytes(url, data)
    st.put_file(local, f"s3://{bucket}/t.parquet")
    for _ in range(2):
        for url, data in blobs.items():
            with st.open_input(url, block_size=256 << 10) as f:
                assert f.read() == data, url
        assert pq.read_table(st.open_random(f"s3://{bucket}/t.parquet")).equals(table)
    assert [o.url for o in st.expand([f"s3://{bucket}/*.bin"])] == sorted(blobs)
    assert proxy.counts["slowdown"] > 20 and proxy.counts["reset"] > 0, proxy.counts


def test_last_retry_is_one_line_naming_the_object(seaweed: SeaweedS3, bucket: str, make_proxy) -> None:
    s3_storage(seaweed).write_bytes(f"s3://{bucket}/k", b"x")
    proxy = make_proxy(slowdown=1.0)
    with pytest.raises(StorageError) as err:
        s3_storage(seaweed, proxy.url, attempts=3).read_bytes(f"s3://{bucket}/k")
    msg = str(err.value)
    assert msg.startswith(f"s3://{bucket}/k: ") and "after 3 tries" in msg and "\n" not in msg, msg
    assert isinstance(err.value, MdfError)


def test_missing_things_exit_2_naming_the_url(seaweed: SeaweedS3, bucket: str) -> None:
    st = s3_storage(seaweed, attempts=2)
    for call, url in (
        (lambda: st.info(f"s3://{bucket}/nope"), f"s3://{bucket}/nope"),
        (lambda: st.expand([f"s3://{bucket}/**/*.warc.gz"]), f"s3://{bucket}/**/*.warc.gz"),
        (lambda: st.expand(["s3://no-such-bucket-mdf/x"]), "s3://no-such-bucket-mdf/x"),
    ):
        with pytest.raises(ObjectNotFound) as err:
            call()
        assert str(err.value).startswith(url) and err.value.exit_code == 2, str(err.value)


def test_wrong_endpoint_and_wrong_secret_say_so_without_the_secret(seaweed: SeaweedS3, bucket: str) -> None:
    from tests.storage_servers import free_ports

    (port,) = free_ports(1)
    with pytest.raises(StorageError) as err:
        s3_storage(seaweed, f"http://127.0.0.1:{port}", attempts=2).info(f"s3://{bucket}/k")
    assert str(err.value).startswith(f"s3://{bucket}/k: ") and "after 2 tries" in str(err.value)
    bad = S3Settings(
        endpoint_url=seaweed.endpoint.url, access_key_id=seaweed.access_key,  # type: ignore[union-attr]
        secret_access_key="wrong-secret-value-123", max_attempts=2,
    )  # fmt: skip
    with pytest.raises(StorageError) as err:
        Storage(StorageSettings(s3=bad)).write_bytes(f"s3://{bucket}/k", b"x")
    text = str(err.value) + repr(err.value)
    assert "wrong-secret-value-123" not in text and seaweed.secret_key not in text
    assert str(err.value).startswith(f"s3://{bucket}/k: write failed"), str(err.value)


def test_delete_prefix_is_one_batched_request_and_survives_faults(seaweed: SeaweedS3, bucket: str, make_proxy) -> None:
    """A prefix of 30 objects goes in one ``DeleteObjects`` (with its listing and the folder-marker clean-up: at
    most 5 requests through the proxy), and through 20 % SlowDown and 2 % resets nothing under it is left while
    its neighbours stay. Fails on one DELETE per object (pyarrow ``delete_file`` from 16 threads, which stalled
    ~1 s per delete on SeaweedFS): seen, 96 requests for the 30 objects."""
    st = s3_storage(seaweed)
    for i in range(30):
        st.write_bytes(f"s3://{bucket}/out/_mdf/staging/r/part-{i:02d}.parquet", b"x" * i)
    st.write_bytes(f"s3://{bucket}/out/part-00.parquet", b"kept")
    counted = make_proxy()
    s3_storage(seaweed, counted.url).delete_prefix(f"s3://{bucket}/out/_mdf/staging")
    assert sum(counted.counts.values()) <= 5, counted.counts
    assert [o.url for o in st.list(f"s3://{bucket}/out", hidden=True)] == [f"s3://{bucket}/out/part-00.parquet"]
    for i in range(30):
        st.write_bytes(f"s3://{bucket}/out/_mdf/staging/s/part-{i:02d}.parquet", b"y")
    faulty = make_proxy(slowdown=0.20, reset=0.02, seed=11)
    s3_storage(seaweed, faulty.url).delete_prefix(f"s3://{bucket}/out/_mdf/staging/s")
    assert [o.url for o in st.list(f"s3://{bucket}/out", hidden=True)] == [f"s3://{bucket}/out/part-00.parquet"]
