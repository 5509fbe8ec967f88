"""Issue 46, items 1 and 14 on object storage: colliding names under ``s3://**``, an endpoint with credentials,
a server that does not answer, paths files, and a killed run's lock on an ``s3://`` dedup index.

Real SeaweedFS (``tests/storage_servers.py``), a loopback HTTP server with ranges, the real CLI. Each test says
how it was seen failing on eefbc81 (the code before this change).

Keys with an empty segment (``a//b``) cannot be made on SeaweedFS, which folds ``//`` into ``/`` when an object
is written (a PUT of ``a//b`` lists as ``a/b``); AWS keeps them as keys of their own, and so does moto's S3 server
(``moto[server]``, installed by the ``storage`` session), which that one test runs against.
"""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from mdf.demo_data import dedup_table

from .bad_inputs.make_corpus import records
from .conftest import mdf_command, run_mdf
from .reliability import table

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]
pytest.importorskip("mdf_text")

WARC = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "warc"
KEEP_ALL = [{"text_length_filter": {"min_length": 0}}]
KEEP_ALL_WARC = [{"text_length_filter": {"column": "url", "min_length": 0}}]


def recipe(tmp: Path, reader: dict, executor: dict | None = None, ops: list | None = None, **extra) -> Path:
    spec = {
        "reader": reader,
        "stages": [{"name": "s", "operators": ops or KEEP_ALL}],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / "rej")},
        "executor": executor or {"type": "inline"},
        **extra,
    }
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "recipe.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def one_error_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr[-3000:]
    return lines[0]


def parquet_bytes(rows: int, seed: int) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(records(rows, seed)), sink)
    return sink.getvalue().to_pybytes()


# item 1 over s3://


@pytest.mark.parametrize("executor", [{"type": "inline", "workers": 2}, {"type": "ray"}], ids=["inline", "ray"])
def test_item1_colliding_names_under_an_s3_glob_each_get_a_part_file(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path, executor: dict
) -> None:
    """``data/a__b.parquet`` and ``data/a/b.parquet`` listed by ``s3://bucket/data/**``. Seen red on eefbc81:
    inline with 2 workers exit 1 "unexpected KeyError: 'a__b_parquet-...'"; on Ray exit 0 and 1,000 of the 2,000
    rows on disk."""
    client = seaweed.client()
    client.put_object(Bucket=bucket, Key="data/a__b.parquet", Body=parquet_bytes(1000, 1))
    client.put_object(Bucket=bucket, Key="data/a/b.parquet", Body=parquet_bytes(1000, 2))
    assert seaweed.endpoint is not None
    spec = recipe(tmp_path, {"type": "parquet", "paths": [f"s3://{bucket}/data/**"]}, executor)
    result = run_mdf("run", "-q", str(spec), env=seaweed.endpoint.env())
    assert result.returncode == 0, result.stderr[-3000:]
    assert table(tmp_path / "out").num_rows == 2000
    assert len(list((tmp_path / "out").glob("*.parquet"))) == 2


# item 14: the endpoint, a server that does not answer


@pytest.mark.parametrize("where", ["recipe", "variable"])
def test_item14_an_endpoint_with_credentials_is_refused_without_showing_them(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path, where: str
) -> None:
    """``endpoint_url: http://user:pass@host:port``. Refused, not taken (S3 clients read ``user:pass@host`` as a
    host name; keys belong where the AWS tools read them). Seen red on eefbc81, from the recipe and from the
    variable alike: exit 2 after 8 tries, "cannot list ...: ... Could not resolve host: mdfuser" (the user name
    read as the host), no word of the credentials in the endpoint."""
    ep = seaweed.endpoint
    assert ep is not None
    with_keys = ep.url.replace("http://", "http://mdfuser:hunter2-secret@")
    reader = {"type": "parquet", "paths": [f"s3://{bucket}/x.parquet"]}
    env = {"AWS_ACCESS_KEY_ID": ep.access_key, "AWS_SECRET_ACCESS_KEY": ep.secret_key}
    if where == "recipe":
        spec = recipe(tmp_path, reader, storage={"s3": {"endpoint_url": with_keys}})
    else:
        spec = recipe(tmp_path, reader)
        env["AWS_ENDPOINT_URL_S3"] = with_keys
    result = run_mdf("run", str(spec), env=env)
    assert result.returncode == 2, result.stderr[-3000:]
    line = one_error_line(result)
    source = "storage.s3.endpoint_url" if where == "recipe" else "AWS_ENDPOINT_URL_S3"
    assert line.startswith(f"error: {source}: ") and "carries credentials" in line, line
    assert "hunter2-secret" not in result.stderr + result.stdout and "***@" in line


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_item14_a_server_that_does_not_answer_is_a_connection_failure_naming_it(tmp_path: Path) -> None:
    """An ``http://`` input and an ``s3://`` endpoint on a port nobody listens on. Seen red on eefbc81: the
    http one said "no such object or prefix ... fix the path"; the s3 one did not name the endpoint."""
    port = closed_port()
    reader = {"type": "warc", "paths": [f"http://127.0.0.1:{port}/crawl/a.warc.gz"]}
    result = run_mdf("run", str(recipe(tmp_path / "http", reader, ops=KEEP_ALL_WARC)))
    line = one_error_line(result)
    assert result.returncode == 2 and f"cannot connect to 127.0.0.1:{port}" in line, line
    assert "no such object" not in line
    endpoint = f"http://127.0.0.1:{port}"
    storage = {"s3": {"endpoint_url": endpoint, "max_attempts": 2, "access_key_id": "k", "secret_access_key": "s"}}
    reader = {"type": "parquet", "paths": ["s3://bkt/data/**/*.parquet"]}
    result = run_mdf("run", str(recipe(tmp_path / "s3", reader, storage=storage)))
    line = one_error_line(result)
    assert result.returncode == 2, line
    assert f"cannot connect to the S3 endpoint {endpoint} (storage.s3.endpoint_url)" in line, line


# item 14: paths files


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local base with two real WARC files under ``crawl/seg/``, and a file outside it."""
    if not (WARC / "resili-warcfile.warc.gz").is_file():
        pytest.skip(f"real WARC files not found at {WARC} (../shared/data/warc)")
    root = tmp_path_factory.mktemp("crawl")
    (root / "base" / "crawl" / "seg").mkdir(parents=True)
    for name in ("resili-warcfile.warc.gz", "warcio-example.warc.gz"):
        (root / "base" / "crawl" / "seg" / name).write_bytes((WARC / name).read_bytes())
    (root / "secret.warc.gz").write_bytes((WARC / "warcio-example.warc.gz").read_bytes())
    return root


def listing(tmp: Path, crawl: Path, text: str, gz: bool = False) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / ("warc.paths.gz" if gz else "warc.paths")
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    reader = {"type": "warc", "commoncrawl": {"paths_file": str(path), "base": str(crawl / "base")}}
    return recipe(tmp, reader, ops=KEEP_ALL_WARC)


def test_item14_a_paths_file_with_a_bom_comments_and_blank_lines_is_read(crawl: Path, tmp_path: Path) -> None:
    """Seen red on eefbc81: exit 2, the BOM read as part of the first key ("no input file matches
    '.../base/\\ufeffcrawl/seg/...'"), and a ``#`` line taken as a key."""
    text = "\ufeff# CC-MAIN test listing\ncrawl/seg/resili-warcfile.warc.gz\n\n  \n# two\n"
    text += "crawl/seg/warcio-example.warc.gz\n"
    result = run_mdf("run", "-q", str(listing(tmp_path, crawl, text, gz=True)))
    assert result.returncode == 0, result.stderr[-3000:]
    assert set(table(tmp_path / "out").column("warc_file").to_pylist()) == {
        str(crawl / "base" / "crawl" / "seg" / n) for n in ("resili-warcfile.warc.gz", "warcio-example.warc.gz")
    }


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("../secret.warc.gz", "leaves base ('..')"),
        ("crawl/../../secret.warc.gz", "leaves base ('..')"),
        ("ABS", "is an absolute path"),
        ("crawl//seg/warcio-example.warc.gz", "has an empty or '.' segment"),
        ("https://elsewhere.example/x.warc.gz", "is a URL"),
    ],
)
def test_item14_a_paths_file_naming_a_file_outside_base_is_refused(
    crawl: Path, tmp_path: Path, key: str, why: str
) -> None:
    """Seen red on eefbc81: ``../secret.warc.gz``, ``crawl/../../secret.warc.gz`` and the absolute path read the
    file outside base (exit 0, its records in the output); ``crawl//seg/x`` was taken as a key (a local base
    folds it into ``crawl/seg/x``; a server may or may not, so it may read one file under two names); a URL
    was appended to base ("no input file matches '<base>/https://elsewhere...'")."""
    key = str(crawl / "secret.warc.gz") if key == "ABS" else key
    text = f"crawl/seg/resili-warcfile.warc.gz\n{key}\n"
    result = run_mdf("run", str(listing(tmp_path, crawl, text)))
    line = one_error_line(result)
    assert result.returncode == 2 and line.startswith("error: reader.commoncrawl.paths_file: line 2 of "), line
    assert f"{key!r} {why}" in line, line
    assert not (tmp_path / "out").exists()


# item 14: a killed run's lock on an s3:// dedup index


@pytest.mark.parametrize("executor", ["inline", "ray"])
def test_item14_a_killed_runs_s3_index_lock_does_not_hold_its_own_resume_off(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path, executor: str
) -> None:
    """An ``index_mode: update`` run with its index under ``s3://`` killed with SIGKILL while it holds the
    index's lock (inline: the run's process; on Ray: a bucket actor's, which dies with its driver), then
    ``--resume`` at once. The holder's pid is dead on this host: the lock is taken over, as the S3 output lock
    does. Seen red on eefbc81 (inline): exit 2 "index s3://.../idx is being updated by the run writing ... (pid N
    on vm, ..., lock renewed 13 s ago); wait for it ..." until the lock was 60 s old."""
    data = tmp_path / "data"
    data.mkdir()
    pq.write_table(dedup_table(1200, exact_rate=0.25, mean_words=40, seed=5), data / "a.parquet", row_group_size=40)
    ep = seaweed.endpoint
    assert ep is not None
    storage = {"s3": {"endpoint_url": ep.url, "region": ep.region, "access_key_id": ep.access_key,
                      "secret_access_key": ep.secret_key}}  # fmt: skip
    ops = [
        {"delay_refiner": {"seconds_per_batch": 0.3}},
        {"exact_dedup": {"index": f"s3://{bucket}/idx", "index_mode": "update", "index_source": "id"}},
    ]
    spec = recipe(
        tmp_path,
        {"type": "parquet", "paths": [str(data / "a.parquet")], "row_groups_per_shard": 1},
        {"type": "inline", "batch_rows": 40, "workers": 1}
        if executor == "inline"
        else {"type": "ray", "batch_rows": 40},
        ops,
        storage=storage,
        state={"snapshot_every_s": 0, "num_buckets": 2},
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    first = subprocess.Popen([*mdf_command(), "run", "-q", str(spec)], env=env, stderr=subprocess.PIPE)
    client = seaweed.client()
    deadline = time.time() + 300  # a local Ray starting on a loaded machine took over 120 s here
    while not client.list_objects_v2(Bucket=bucket, Prefix="idx/_lock.json").get("KeyCount"):
        assert first.poll() is None and time.time() < deadline, first.stderr.read()[-2000:]  # type: ignore[union-attr]
        time.sleep(0.1)
    time.sleep(1.0)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    resumed = subprocess.run([*mdf_command(), "run", "-q", "--resume", str(spec)], env=env, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]  # eefbc81: exit 2 at once, before any work
    assert table(tmp_path / "out").num_rows + table(tmp_path / "rej").num_rows == 1200


# item 14: keys with an empty segment (a server that keeps them: moto, as AWS does)


@pytest.fixture
def moto_s3(tmp_path: Path):
    """``moto_server`` on a free loopback port (skipped where ``moto[server]`` is not installed)."""
    import shutil
    import sys

    from tests.storage_servers import free_ports

    exe = Path(sys.executable).with_name("moto_server")
    if not exe.exists() and shutil.which("moto_server") is None:
        pytest.skip("moto's S3 server not installed: pip install 'moto[server]'")
    (port,) = free_ports(1)
    log = open(tmp_path / "moto.log", "wb")  # noqa: SIM115 - the child holds it
    proc = subprocess.Popen([str(exe) if exe.exists() else "moto_server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    env = {
        "AWS_ENDPOINT_URL_S3": url,
        "AWS_ACCESS_KEY_ID": "k",
        "AWS_SECRET_ACCESS_KEY": "s",
        "AWS_REGION": "us-east-1",
    }
    import boto3

    client = boto3.client("s3", endpoint_url=url, aws_access_key_id="k", aws_secret_access_key="s",
                          region_name="us-east-1")  # fmt: skip
    deadline = time.time() + 60
    while True:
        try:
            client.list_buckets()
            break
        except Exception:
            assert proc.poll() is None and time.time() < deadline, (tmp_path / "moto.log").read_text()[-2000:]
            time.sleep(0.3)
    yield client, env
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)
    log.close()


def test_item14_a_key_with_an_empty_segment_is_refused_when_listed(moto_s3, tmp_path: Path) -> None:
    """``data/a.parquet`` and ``data//b.parquet`` (a key of its own on AWS). pyarrow lists it but cannot open
    it ("Empty path component"). Seen red on eefbc81: listed, then the run failed when it reached the key: exit
    1, "error: s3://keys/data//b.parquet: read at byte 0 failed: Empty path component in path ...", after work.
    Refused when listed now, exit 2 before any work."""
    client, env = moto_s3
    client.create_bucket(Bucket="keys")
    client.put_object(Bucket="keys", Key="data/a.parquet", Body=parquet_bytes(100, 1))
    client.put_object(Bucket="keys", Key="data//b.parquet", Body=parquet_bytes(100, 2))
    result = run_mdf("run", str(recipe(tmp_path, {"type": "parquet", "paths": ["s3://keys/data/**"]})), env=env)
    line = one_error_line(result)
    assert result.returncode == 2 and line.startswith("error: reader.paths[0]: 1 object(s) under "), line
    assert "'s3://keys/data//b.parquet'" in line and "empty segment" in line
    assert not (tmp_path / "out").exists()
