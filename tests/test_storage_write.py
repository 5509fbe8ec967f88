"""Writing an ``s3://`` output against a real SeaweedFS: the rows of the local run, a ``_SUCCESS`` manifest listing
exactly the parts, the run's ``_mdf/`` files on S3, a second run refused naming the first, kill -9 then
``--resume`` giving the clean rows, ``--overwrite`` leaving no old part, and nothing of a killed or failed run at
the output prefix. Every ``mdf run`` is a subprocess, the way users run it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from .conftest import ROOT, run_mdf

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]

FILTER = {"text_length_filter": {"min_length": 40}}


def hold(tmp: Path, rows: int) -> dict[str, Any]:
    """An operator that stops the run once ``rows`` rows passed it, until :func:`release` (``delay_refiner``'s
    hold): a test that waits to see a run mid-way cannot find it already done, however loaded the machine. Put
    first, it sees every row read; at most ``rows - 1`` plus one batch pass before the hold."""
    return {"delay_refiner": {"hold_dir": str(tmp / "hold"), "hold_after_rows": rows}}


def release(tmp: Path) -> None:
    (tmp / "hold").mkdir(exist_ok=True)
    (tmp / "hold" / "release").touch()


def inputs(folder: Path, n: int = 4, rows: int = 600) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        ids = list(range(i * rows, (i + 1) * rows))
        text = [f"row {k} " + "word " * (k % 13) for k in ids]
        pq.write_table(pa.table({"id": ids, "text": text}), folder / f"in-{i}.parquet", row_group_size=200)
        out.append(str(folder / f"in-{i}.parquet"))
    return out


def recipe(
    tmp: Path, paths: list[str], out: str, rej: str, ops: list[dict[str, Any]], name: str = "r", writer: str = "parquet"
) -> Path:
    spec = {
        "reader": {"type": "parquet", "paths": paths},
        "stages": [{"name": "s", "operators": ops}],
        "writer": {"type": writer, "path": out},
        "rejected": {"type": "parquet", "path": rej},
        "executor": {"type": "inline", "batch_rows": 200, "workers": 2},  # two shards at once: slow runs stay slow
    }
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def env(seaweed: SeaweedS3, tmp: Path) -> dict[str, str]:
    assert seaweed.endpoint is not None
    return {**seaweed.endpoint.env(), "MDF_CACHE_DIR": str(tmp / "cache")}


def objects(seaweed: SeaweedS3, bucket: str, prefix: str) -> dict[str, bytes]:
    client = seaweed.client()
    got: dict[str, bytes] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
        for o in page.get("Contents", []):
            if o["Key"].endswith("/"):  # a folder marker (SeaweedFS lists its folders), not an object
                continue
            try:
                got[o["Key"][len(prefix) + 1 :]] = client.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
            except client.exceptions.NoSuchKey:  # deleted since the listing (a publish removing its staging)
                continue
    return got


def data(objs: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in objs.items() if not k.startswith(("_", "."))}


def rows(objs: dict[str, bytes]) -> list[tuple[int, str]]:
    tables = [pq.read_table(pa.BufferReader(v)) for k, v in sorted(data(objs).items())]
    if not tables:
        return []
    t = pa.concat_tables(tables, promote_options="default")
    return sorted(zip(t.column("id").to_pylist(), t.column("text").to_pylist(), strict=True))


def local_rows(folder: Path) -> list[tuple[int, str]]:
    t = pq.read_table(folder)
    return sorted(zip(t.column("id").to_pylist(), t.column("text").to_pylist(), strict=True))


def popen(path: Path, extra_env: dict[str, str], *flags: str) -> subprocess.Popen:
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mdf.cli"]
    return subprocess.Popen([*cmd, "run", "-q", str(path), *flags], cwd=ROOT, env={**os.environ, **extra_env},
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip


def wait_for_objects(seaweed: SeaweedS3, bucket: str, prefix: str, proc: subprocess.Popen, what: str, n: int = 1):
    deadline = time.time() + 120
    while sum(what in k for k in objects(seaweed, bucket, prefix)) < n:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.time() < deadline, f"{what} never appeared under {prefix}"
        time.sleep(0.2)


def wait_for_committed(seaweed: SeaweedS3, bucket: str, prefix: str, proc: subprocess.Popen, n: int) -> None:
    """Until the staged checkpoint manifest counts ``n`` committed shards (their parts uploaded before it)."""
    deadline = time.time() + 120
    while True:
        staged = [v for k, v in objects(seaweed, bucket, prefix).items() if k.endswith("_mdf/state/manifest.json")]
        if any(len(json.loads(v)["completed"]) >= n for v in staged):
            return
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.time() < deadline, f"{n} committed shards never appeared under {prefix}"
        time.sleep(0.2)


def open_uploads(seaweed: SeaweedS3, bucket: str, prefix: str) -> list[str]:
    """Keys of the multipart uploads open under ``prefix/`` (invisible to listings until completed)."""
    return [
        u["Key"] for u in seaweed.client().list_multipart_uploads(Bucket=bucket, Prefix=prefix + "/").get("Uploads", [])
    ]


def test_s3_output_gives_the_local_rows_and_success_lists_exactly_the_parts(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path
) -> None:
    """Inline run local -> s3://: rows and rejected rows equal the local run's; ``_SUCCESS`` names exactly the
    published parts; ``run.json`` (complete), ``metrics.json``, ``shards.json`` and the report are under
    ``<output>/_mdf/``; no staging is left; the secret key is in none of them nor on the terminal; ``--resume``
    of the complete output redoes nothing and keeps the same parts. (Fails on the code before the write side:
    exit 2 'is a URL: mdf reads object storage but does not write it yet': seen; with the run's _mdf/ files
    left out of the publish, <output>/_mdf/run.json still said 'running': seen.)"""
    paths = inputs(tmp_path / "in")
    local = recipe(tmp_path, paths, str(tmp_path / "out"), str(tmp_path / "rej"), [FILTER], "local")
    assert run_mdf("run", "-q", str(local)).returncode == 0
    s3 = recipe(tmp_path, paths, f"s3://{bucket}/out", f"s3://{bucket}/rej", [FILTER], "s3")
    result = run_mdf("run", str(s3), env=env(seaweed, tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    out, rej = objects(seaweed, bucket, "out"), objects(seaweed, bucket, "rej")
    assert rows(out) == local_rows(tmp_path / "out") and len(rows(out)) > 0
    assert rows(rej) == local_rows(tmp_path / "rej") and len(rows(rej)) > 0
    for objs in (out, rej):
        manifest = json.loads(objs["_SUCCESS"])
        assert sorted(f["name"] for f in manifest["files"]) == sorted(data(objs))
        assert all(f["size"] == len(objs[f["name"]]) for f in manifest["files"])
        assert json.loads(objs["_mdf/run.json"])["status"] == "complete"
        assert "_mdf/shards.json" in objs and not [k for k in objs if k.startswith("_mdf/staging/")]
        assert "_mdf/lock" not in objs
    assert json.loads(out["_mdf/metrics.json"])["rows_read"] == 2400 and "_mdf/report.html" in out
    secret = env(seaweed, tmp_path)["AWS_SECRET_ACCESS_KEY"].encode()
    assert not any(secret in v for v in [*out.values(), *rej.values()])
    assert secret.decode() not in result.stdout + result.stderr
    again = run_mdf("run", "-q", str(s3), "--resume", env=env(seaweed, tmp_path))  # complete: nothing to redo
    assert again.returncode == 0, again.stderr[-3000:]
    now = objects(seaweed, bucket, "out")
    assert data(now) == data(out) and json.loads(now["_mdf/metrics.json"])["resumed"]["this_run_shards"] == 0


def test_second_run_refused_naming_the_first_then_kill_9_and_resume_gives_the_clean_rows(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path
) -> None:
    """A slow run on s3://: a second run exits 2 in one line naming the first's pid and host; nothing is visible
    at the output while it runs; after kill -9 (its lock left behind, its working folder deleted: another
    machine resumes), ``--resume`` takes the dead run's lock over at once, skips the committed shards and gives
    exactly the clean run's rows. (Fails without the dead-holder check in S3Lock.acquire: after the kill every
    run was refused 'held by another run' for the lock's 60 s ttl: seen; with the checkpoint manifest not
    uploaded by the mirror, the resume skipped no shard: seen.) The run is held, not slowed (:func:`hold`): two
    of its six 1,000-row shards are whole once 5,001 rows passed (one whole and five of at most 800 hold 5,000)."""
    paths = inputs(tmp_path / "in", n=6, rows=1000)
    clean = recipe(tmp_path, paths, str(tmp_path / "out"), str(tmp_path / "rej"), [FILTER], "clean")
    assert run_mdf("run", "-q", str(clean)).returncode == 0
    s3 = recipe(tmp_path, paths, f"s3://{bucket}/out", f"s3://{bucket}/rej", [hold(tmp_path, 5001), FILTER], "s3")
    e = env(seaweed, tmp_path)
    first = popen(s3, e)
    try:
        wait_for_committed(seaweed, bucket, "out", first, n=2)  # two shards committed and mirrored
        assert not data(objects(seaweed, bucket, "out")), "a running run's parts are visible at the output"
        assert len(open_uploads(seaweed, bucket, "out")) >= 2  # uploaded to their final keys, not completed
        second = run_mdf("run", "-q", str(s3), env=e)
        assert first.poll() is None, "the first run ended before the second was refused"
        assert second.returncode == 2, second.stderr
        lines = [x for x in second.stderr.splitlines() if x.strip()]
        assert len(lines) == 1 and f"pid {first.pid}" in lines[0] and "held by another run" in lines[0], lines
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    left = objects(seaweed, bucket, "out")
    assert "_mdf/lock" in left and not data(left) and "_SUCCESS" not in left
    refused = run_mdf("run", "-q", str(s3), env=e)
    assert refused.returncode == 2 and "--resume" in refused.stderr
    for p in (tmp_path / "cache").iterdir():  # the next run may be on another machine
        subprocess.run(["rm", "-rf", str(p)], check=True)
    release(tmp_path)
    resumed = run_mdf("run", str(s3), "--resume", env=e)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    out = objects(seaweed, bucket, "out")
    assert rows(out) == local_rows(tmp_path / "out")
    assert rows(objects(seaweed, bucket, "rej")) == local_rows(tmp_path / "rej")
    assert json.loads(out["_mdf/metrics.json"])["resumed"]["skipped_shards"] >= 1
    assert sorted(f["name"] for f in json.loads(out["_SUCCESS"])["files"]) == sorted(data(out))
    assert open_uploads(seaweed, bucket, "out") == [] and open_uploads(seaweed, bucket, "rej") == []


def test_overwrite_keeps_the_old_output_until_publish_then_leaves_no_old_part(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path
) -> None:
    """A second run without a flag is refused (exit 2 naming --overwrite); ``--overwrite`` with fewer inputs
    keeps the old output readable while it runs and publishes exactly the new parts. (Fails with publish's
    deletion of unlisted objects removed: old parts stayed beside the new: seen.)"""
    paths = inputs(tmp_path / "in", n=4, rows=300)
    e = env(seaweed, tmp_path)
    first = recipe(tmp_path, paths, f"s3://{bucket}/out", f"s3://{bucket}/rej", [FILTER], "a")
    assert run_mdf("run", "-q", str(first), env=e).returncode == 0
    old = objects(seaweed, bucket, "out")
    again = run_mdf("run", "-q", str(first), env=e)
    assert again.returncode == 2 and "--overwrite" in again.stderr and objects(seaweed, bucket, "out") == old
    # two 300-row shards in batches of 200 and 100: one is whole once 401 rows passed, and at most 500 pass
    second = recipe(tmp_path, paths[:2], f"s3://{bucket}/out", f"s3://{bucket}/rej", [hold(tmp_path, 401), FILTER], "b")
    proc = popen(second, e, "--overwrite")
    try:
        wait_for_objects(seaweed, bucket, "out", proc, "_mdf/state/manifest.json")
        now = objects(seaweed, bucket, "out")
        assert data(now) == data(old) and now["_SUCCESS"] == old["_SUCCESS"]
    finally:
        release(tmp_path)
        assert proc.wait(timeout=240) == 0, proc.stderr.read() if proc.stderr else ""
    out = objects(seaweed, bucket, "out")
    assert sorted(data(out)) == ["in-0.parquet", "in-1.parquet"]
    assert sorted(f["name"] for f in json.loads(out["_SUCCESS"])["files"]) == sorted(data(out))
    assert [r[0] for r in rows(out)] == [r[0] for r in rows(old) if r[0] < 600]


def test_a_failed_run_leaves_nothing_but_mdf_and_says_failed(seaweed: SeaweedS3, bucket: str, tmp_path: Path) -> None:
    """SIGTERM during a run on s3://: exit 143, nothing at the output prefix but ``_mdf/``, the staged
    ``run.json`` ends ``failed`` with the reason, and no secret in any object. (Fails with fail() not uploading
    the record: the staged run.json said 'running': seen.)"""
    paths = inputs(tmp_path / "in", n=6, rows=400)
    e = env(seaweed, tmp_path)
    # six 400-row shards in batches of 200: one is whole once 1,201 rows passed, and at most 1,400 pass
    s3 = recipe(tmp_path, paths, f"s3://{bucket}/out", f"s3://{bucket}/rej", [hold(tmp_path, 1201), FILTER], "s3")
    proc = popen(s3, e)
    wait_for_objects(seaweed, bucket, "out", proc, "_mdf/state/manifest.json")
    os.killpg(proc.pid, signal.SIGTERM)
    release(tmp_path)  # a batch inside an operator when the signal comes ends first (threads are not interrupted)
    assert proc.wait(timeout=60) == 143
    out = objects(seaweed, bucket, "out")
    assert all(k.startswith("_mdf/") for k in out), sorted(out)
    records = [json.loads(v) for k, v in out.items() if k.endswith("run.json")]
    assert records and all(r["status"] == "failed" and "Terminated" in r["error"] for r in records)
    assert any(k.startswith("_mdf/staging/") and k.endswith("/_mdf/run.log") for k in out)  # why, for the user
    assert not any(e["AWS_SECRET_ACCESS_KEY"].encode() in v for v in out.values())


def test_an_s3_output_through_503s_and_resets_completes_with_the_clean_rows(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path, make_proxy
) -> None:
    """Every request of the run (lock, uploads, copies, deletes, listings) through a proxy answering 20 % of them
    503 SlowDown and resetting 2 % mid-body: exit 0, the clean run's rows, ``_SUCCESS`` listing exactly the parts.
    The proxy counts the resets it made (a reset drawn for a response with nothing to cut goes to the next that
    has), so both faults must have happened: the check read ``counts["reset"] >= 0``, which no run could fail (seen
    red now with the proxy's reset share at 0: 0 resets). (Fails with the retries cut to one attempt,
    storage.s3.max_attempts: 1: the run ended on a reset: seen; and
    before small objects went up as one PutObject (pyarrow's allow_delayed_open), a run.json upload of three
    requests failed all 8 tries: seen.)"""
    paths = inputs(tmp_path / "in", n=4, rows=300)
    local = recipe(tmp_path, paths, str(tmp_path / "out"), str(tmp_path / "rej"), [FILTER], "local")
    assert run_mdf("run", "-q", str(local)).returncode == 0
    proxy = make_proxy(slowdown=0.2, reset=0.02)
    s3 = recipe(tmp_path, paths, f"s3://{bucket}/out", f"s3://{bucket}/rej", [FILTER], "s3")
    result = run_mdf("run", "-q", str(s3), env={**env(seaweed, tmp_path), "AWS_ENDPOINT_URL_S3": proxy.url})
    assert result.returncode == 0, result.stderr[-3000:]
    assert proxy.counts["slowdown"] > 0 and proxy.counts["reset"] > 0, proxy.counts  # both faults happened
    out = objects(seaweed, bucket, "out")
    assert rows(out) == local_rows(tmp_path / "out")
    assert rows(objects(seaweed, bucket, "rej")) == local_rows(tmp_path / "rej")
    assert sorted(f["name"] for f in json.loads(out["_SUCCESS"])["files"]) == sorted(data(out))


def test_the_mirror_uploads_parts_invisibly_and_sends_a_manifest_only_with_its_snapshots(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path
) -> None:
    """A committed part goes up as a multipart upload to its final key, left open (no listing shows it) and
    deleted locally; its upload id is staged in ``_mdf/uploads.json``. A checkpoint manifest goes up only once
    every snapshot it names is on S3 (the run writes on while a round runs), and only then is a snapshot gone
    locally deleted from S3. A redone shard's part replaces its upload (the first is aborted); the publish
    completes the upload and leaves none open. (Fails with the manifest sent without its snapshots: the staging
    prefix held a manifest naming a missing snapshot: seen; and with the first upload of a redone part not
    aborted: two uploads stayed open: seen.)"""
    from mdf.output.publish import publish
    from mdf.output.remote import RemoteOutput
    from mdf.storage import Storage, StorageSettings
    from mdf.storage.config import S3Settings

    ep = seaweed.endpoint
    assert ep is not None
    s3 = S3Settings(endpoint_url=ep.url, access_key_id=ep.access_key, secret_access_key=ep.secret_key)
    out = RemoteOutput(f"s3://{bucket}/out", "writer", Storage(StorageSettings(s3=s3)), run_id="r1", work=tmp_path)
    state = tmp_path / "_mdf" / "state"
    state.mkdir(parents=True)
    (tmp_path / "a.parquet").write_bytes(b"part a")
    (state / "bucket-0.1.pkl").write_bytes(b"one")
    manifest = json.dumps({"completed": ["s0"], "buckets": ["bucket-0.1.pkl"]}).encode()
    out.sync(manifest)

    def staged() -> dict[str, bytes]:
        return objects(seaweed, bucket, "out/_mdf/staging/r1")

    first = staged()
    assert first["_mdf/state/bucket-0.1.pkl"] == b"one" and first["_mdf/state/manifest.json"] == manifest
    assert "a.parquet" not in first and not data(objects(seaweed, bucket, "out"))  # invisible until completed
    assert open_uploads(seaweed, bucket, "out") == ["out/a.parquet"] and not (tmp_path / "a.parquet").exists()
    assert list(json.loads(first["_mdf/uploads.json"])) == ["a.parquet"]
    # the next checkpoint's manifest names a snapshot this round did not see: neither it nor a deletion goes up
    (state / "bucket-0.1.pkl").unlink()
    later = json.dumps({"completed": ["s0", "s1"], "buckets": ["bucket-0.2.pkl"]}).encode()
    out.sync(later)
    assert staged()["_mdf/state/manifest.json"] == manifest and "_mdf/state/bucket-0.1.pkl" in staged()
    (state / "bucket-0.2.pkl").write_bytes(b"two")
    out.sync(later)
    now = staged()
    assert now["_mdf/state/manifest.json"] == later and "_mdf/state/bucket-0.1.pkl" not in now
    (tmp_path / "a.parquet").write_bytes(b"part a, redone")
    out.sync(later)
    assert open_uploads(seaweed, bucket, "out") == ["out/a.parquet"]
    publish(out.storage, out.url, "r1", ["a.parquet"], uploads=out.uploads)
    assert data(objects(seaweed, bucket, "out")) == {"a.parquet": b"part a, redone"}
    assert open_uploads(seaweed, bucket, "out") == []


def test_a_jsonl_writer_on_s3_gives_the_local_files(seaweed: SeaweedS3, bucket: str, tmp_path: Path) -> None:
    """The JSON Lines writer (the other PartFiles writer) on s3://: the published files are byte for byte the
    local run's, and ``_SUCCESS`` lists them: the mirror is the writers' common path, not Parquet's. (Fails on
    the code before the write side: exit 2 'is a URL': seen.)"""
    paths = inputs(tmp_path / "in", n=3, rows=300)
    local = recipe(tmp_path, paths, str(tmp_path / "out"), str(tmp_path / "rej"), [FILTER], "local", "jsonl")
    assert run_mdf("run", "-q", str(local)).returncode == 0
    s3 = recipe(tmp_path, paths, f"s3://{bucket}/out", f"s3://{bucket}/rej", [FILTER], "s3", "jsonl")
    result = run_mdf("run", "-q", str(s3), env=env(seaweed, tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    out = objects(seaweed, bucket, "out")
    mine = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir() if p.is_file()}
    assert data(out) == mine and len(mine) == 3
    assert sorted(f["name"] for f in json.loads(out["_SUCCESS"])["files"]) == sorted(mine)
