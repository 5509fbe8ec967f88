"""Parquet and JSONL readers on ``s3://`` globs (SeaweedFS) and ``http://`` URLs (a Range server): the rows of
the local run, Parquet read by range, JSONL streamed in bounded blocks, damage in a remote stream reported,
``--resume`` seeing a rewritten object, and every bad input one line naming the URL (no traceback, no secret)."""

from __future__ import annotations

import base64
import gzip
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from tests.storage_servers import free_ports

from .conftest import run_mdf

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]


def recipe(tmp: Path, reader: dict) -> Path:
    spec = {
        "reader": reader,
        "stages": [{"name": "s", "operators": [{"text_length_filter": {"column": "text", "min_length": 20}}]}],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / "rej")},
        "executor": {"type": "inline"},
    }
    path = tmp / "recipe.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def run(tmp: Path, reader: dict, env: dict[str, str] | None = None, *args: str):
    tmp.mkdir(parents=True, exist_ok=True)
    return run_mdf("run", str(recipe(tmp, reader)), *args, env=env)


def parts(folder: Path) -> dict[str, list[dict]]:
    """Part file -> its rows, without ``_raw`` (which names the input: a path here, a URL there)."""
    out = {}
    for p in sorted(folder.glob("*.parquet")):
        t = pq.read_table(p)
        out[p.name] = t.select([c for c in t.column_names if c != "_raw"]).to_pylist()
    return out


def table(rows: int, seed: int) -> pa.Table:
    return pa.table({
        "id": pa.array([seed * 1_000_000 + i for i in range(rows)], pa.int64()),
        "text": [f"row {i} of {seed}: " + "lorem ipsum " * (i % 7) for i in range(rows)],
        "pad": [os.urandom(64).hex() for _ in range(rows)],  # the bulk a column projection does not read
    })  # fmt: skip


def env_of(seaweed: SeaweedS3, **over: str) -> dict[str, str]:
    assert seaweed.endpoint is not None
    return {**seaweed.endpoint.env(), **over}


def one_line_error(result, code: int = 2) -> str:
    err = result.stderr.strip()
    assert result.returncode == code, result.stderr[-3000:]
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


@pytest.fixture
def parquet_bucket(seaweed: SeaweedS3, bucket: str, tmp_path: Path) -> tuple[str, Path]:
    """``data/a/x.parquet, data/a/b/y.parquet, data/c/z.parquet`` (8 row groups each), a README beside them,
    and the same files in a local folder."""
    local = tmp_path / "local" / "data"
    client = seaweed.client()
    for key, seed in (("a/x.parquet", 1), ("a/b/y.parquet", 2), ("c/z.parquet", 3)):
        (local / key).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table(4000, seed), local / key, row_group_size=500)
        client.put_object(Bucket=bucket, Key=f"data/{key}", Body=(local / key).read_bytes())
    client.put_object(Bucket=bucket, Key="data/README.txt", Body=b"not data")
    return bucket, local


def test_parquet_glob_on_s3_gives_local_rows_by_range(seaweed, parquet_bucket, make_proxy, tmp_path) -> None:
    """``s3://bucket/data/**/*.parquet``: sorted objects, readable shard ids (``a__b__y``), the local run's rows,
    and only the projected column's byte ranges fetched (through a counting proxy). Fails before the change:
    seen (exit 2, "no input file matches 's3://...'"); fails when Parquet reads the object whole
    (``pa.BufferReader(read_bytes(url))``): seen (4,675,885 bytes fetched for 1,755,194 bytes of files)."""
    bucket, local = parquet_bucket
    reader = {"type": "parquet", "columns": ["id", "text"]}
    assert run(tmp_path / "l", {**reader, "paths": [f"{local}/**/*.parquet"]}).returncode == 0
    proxy = make_proxy()
    result = run(tmp_path / "r", {**reader, "paths": [f"s3://{bucket}/data/**/*.parquet"]},
                 env_of(seaweed, AWS_ENDPOINT_URL_S3=proxy.url))  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert parts(tmp_path / "r" / "out") == parts(tmp_path / "l" / "out")
    assert sorted(p.name for p in (tmp_path / "r" / "out").glob("*.parquet")) == [
        "a__b__y.parquet", "a__x.parquet", "c__z.parquet"
    ]  # fmt: skip
    total = sum(p.stat().st_size for p in local.rglob("*.parquet"))
    assert proxy.bytes_out < total * 0.5, (proxy.bytes_out, total)  # "pad" (most of each file) never fetched
    # with 15 % of requests failing SlowDown and 3 % of bodies cut by a reset: the same rows
    faulty = make_proxy(slowdown=0.15, reset=0.03)
    result = run(tmp_path / "f", {**reader, "paths": [f"s3://{bucket}/data"]},
                 env_of(seaweed, AWS_ENDPOINT_URL_S3=faulty.url))  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert parts(tmp_path / "f" / "out") == parts(tmp_path / "l" / "out")


def test_jsonl_streams_in_bounded_blocks_and_reports_damage(seaweed, bucket, make_proxy, tmp_path) -> None:
    """A 10 MB ``.jsonl.zst`` is read in ranged blocks (no response body over 8 MiB: never downloaded whole), a
    plain ``.jsonl`` and a ``.jsonl.gz`` over http:// give their rows, and a ``.jsonl.gz`` cut short on S3 gives
    the rows before the cut plus one ``reader:damaged_input`` row naming the URL. Fails before the change: seen
    (exit 2, "no input file matches 's3://...'")."""
    import zstandard

    from tests.storage_servers import RangeServer

    noise = (base64.b64encode(os.urandom(150)).decode() for _ in range(70_000))  # ~3/4 of it survives zstd
    lines = [json.dumps({"id": i, "text": f"document {i} " + s}) for i, s in enumerate(noise)]
    raw = ("\n".join(lines) + "\n").encode()
    big = zstandard.ZstdCompressor(level=1).compress(raw)
    assert len(big) > 9 << 20
    cut = gzip.compress(raw[: 2 << 20])
    client = seaweed.client()
    client.put_object(Bucket=bucket, Key="j/big.jsonl.zst", Body=big)
    client.put_object(Bucket=bucket, Key="j/cut.jsonl.gz", Body=cut[: len(cut) // 2])
    proxy = make_proxy()
    result = run(tmp_path / "s3", {"type": "jsonl", "paths": [f"s3://{bucket}/j/*.jsonl.*"]},
                 env_of(seaweed, AWS_ENDPOINT_URL_S3=proxy.url))  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert proxy.max_body <= 8 << 20, proxy.max_body
    kept = pq.read_table(tmp_path / "s3" / "out" / "big.parquet")
    assert kept.num_rows == 70_000
    rej = pq.read_table(tmp_path / "s3" / "rej" / "cut.parquet").to_pylist()
    damaged = [r for r in rej if r["_reason"] == "reader:damaged_input"]
    assert len(damaged) == 1 and json.loads(damaged[0]["_raw"])["file"] == f"s3://{bucket}/j/cut.jsonl.gz"
    cut_rows = pq.read_table(tmp_path / "s3" / "out" / "cut.parquet").num_rows
    assert 0 < cut_rows < raw[: 2 << 20].count(b"\n")
    files = {"p/a.jsonl": tmp_path / "a.jsonl", "p/b.jsonl.gz": tmp_path / "b.jsonl.gz"}
    files["p/a.jsonl"].write_bytes(raw[: 1 << 20].rsplit(b"\n", 1)[0] + b"\n")
    files["p/b.jsonl.gz"].write_bytes(gzip.compress(raw[1 << 20 : 2 << 20].split(b"\n", 1)[1]))
    server = RangeServer(files)
    try:
        result = run(tmp_path / "http", {"type": "jsonl", "paths": [f"{server.url}/{k}" for k in files]})
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    local = run(tmp_path / "local", {"type": "jsonl", "paths": [str(p) for p in files.values()]})
    assert local.returncode == 0
    assert parts(tmp_path / "http" / "out") == parts(tmp_path / "local" / "out")


def test_resume_sees_an_object_rewritten_under_the_same_key(seaweed, parquet_bucket, tmp_path) -> None:
    """The fingerprint holds each object's size and last-modified time from the listing: ``--resume`` of a
    finished run continues, and refuses (naming the URL) once an object was rewritten with the same size.
    Fails with the old fingerprint.py (and the new readers): seen (the second --resume exited 0: os.stat of a
    URL gave (None, None) both times)."""
    bucket, local = parquet_bucket
    reader = {"type": "parquet", "paths": [f"s3://{bucket}/data/**/*.parquet"]}
    env = env_of(seaweed)
    assert run(tmp_path, reader, env).returncode == 0
    result = run(tmp_path, reader, env, "--resume")
    assert result.returncode == 0, result.stderr[-2000:]
    time.sleep(1.1)  # a new last-modified second
    data = (local / "a/x.parquet").read_bytes()
    seaweed.client().put_object(Bucket=bucket, Key="data/a/x.parquet", Body=data)
    err = one_line_error(run(tmp_path, reader, env, "--resume"))
    assert "input file(s) changed" in err and f"s3://{bucket}/data/a/x.parquet" in err, err


def test_bad_remote_inputs_are_one_line_each(seaweed, parquet_bucket, tmp_path) -> None:
    """Glob matching nothing, bucket missing, key missing, wrong secret, no credentials, a closed endpoint port:
    exit 2 before any work, one line naming the URL and ``reader.paths[i]``, no traceback, no secret; the closed
    port fails within 60 s (8 tries, at most ~16 s of backoff). Fails before the change: seen (every URL was
    "no input file matches" a local glob)."""
    bucket, _ = parquet_bucket
    env = env_of(seaweed)
    secret = env["AWS_SECRET_ACCESS_KEY"]
    nocreds = {**env, "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "HOME": str(tmp_path)}  # no chain
    cases = {
        f"s3://{bucket}/data/**/*.jsonl": ("no input object matches", env),
        "s3://no-such-bucket-mdf/data/*.parquet": ("bucket 'no-such-bucket-mdf' does not exist", env),
        f"s3://{bucket}/data/a/missing.parquet": ("no input object matches", env),
        f"s3://{bucket}/data/a/x.parquet": (
            "check the credentials",
            {**env, "AWS_SECRET_ACCESS_KEY": "wrong-" + secret},
        ),
        f"s3://{bucket}/data/c/z.parquet": ("check the credentials", nocreds),
    }
    for i, (url, (said, e)) in enumerate(cases.items()):
        err = one_line_error(run(tmp_path / str(i), {"type": "parquet", "paths": [url]}, e))
        assert url in err and "reader.paths[0]" in err and said in err, err
        assert secret not in err
        assert not (tmp_path / str(i) / "out").exists()
    closed = free_ports(1)[0]
    began = time.monotonic()
    url = f"s3://{bucket}/data/**/*.parquet"
    err = one_line_error(run(tmp_path / "closed", {"type": "parquet", "paths": [url]},
                             {**env, "AWS_ENDPOINT_URL_S3": f"http://127.0.0.1:{closed}"}))  # fmt: skip
    assert time.monotonic() - began < 60 and url in err and secret not in err, err
    assert "check the endpoint" in err


def test_a_remote_stream_is_not_downloaded_first(seaweed, bucket, make_proxy, monkeypatch) -> None:
    """Reading the first MiB of a 40 MiB ``.zst`` object fetches at most two 8 MiB blocks (the one read and the
    one prefetched), not the object. Fails when ``open_raw`` reads the object whole first
    (``io.BytesIO(default().read_bytes(url))``): seen (bytes_out 41,944,010)."""
    import zstandard

    import mdf.storage
    from mdf.io.streams import open_stream

    data = zstandard.ZstdCompressor(level=1).compress(os.urandom(40 << 20))
    seaweed.client().put_object(Bucket=bucket, Key="big.bin.zst", Body=data)
    proxy = make_proxy()
    for k, v in env_of(seaweed, AWS_ENDPOINT_URL_S3=proxy.url).items():
        monkeypatch.setenv(k, v)
    mdf.storage.configure(None)  # the process-wide layer, rebuilt on these variables
    try:
        with open_stream(f"s3://{bucket}/big.bin.zst") as f:
            assert len(f.read(1 << 20)) == 1 << 20
    finally:
        monkeypatch.undo()
        mdf.storage.configure(None)
    assert proxy.bytes_out <= 2 * (8 << 20), proxy.bytes_out
