"""The output lock on S3 (a conditional PUT) and the publish protocol, against a real SeaweedFS."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from mdf.output.publish import INTENT, SUCCESS, committed, publish, roll_forward, staging_prefix
from mdf.storage import LockHeld, S3Settings, Storage, StorageSettings, multipart
from mdf.storage.lock import S3Lock

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]


def _settings(server: SeaweedS3) -> StorageSettings:
    ep = server.endpoint
    assert ep is not None
    return StorageSettings(
        s3=S3Settings(endpoint_url=ep.url, access_key_id=ep.access_key, secret_access_key=ep.secret_key)
    )


def test_second_holder_is_refused_naming_the_first(seaweed: SeaweedS3, bucket: str) -> None:
    """Fails when the lock is a plain PUT (seen: the second run took the lock, no LockHeld)."""
    url = f"s3://{bucket}/out/_mdf/lock"
    first = S3Lock(url, {"run_id": "run-one"}, ttl_s=30, settings=_settings(seaweed)).acquire()
    try:
        with pytest.raises(LockHeld) as err:
            S3Lock(url, {"run_id": "run-two"}, ttl_s=30, settings=_settings(seaweed)).acquire()
        msg = str(err.value)
        assert msg.startswith(url) and "run_id run-one" in msg and f"pid {first.holder['pid']}" in msg, msg
        assert err.value.exit_code == 2 and "\n" not in msg
    finally:
        first.release()
    # released: the next run takes it
    S3Lock(url, {"run_id": "run-three"}, settings=_settings(seaweed)).acquire().release()


def test_renewal_keeps_a_live_lock_and_a_stale_one_is_taken_over(seaweed: SeaweedS3, bucket: str) -> None:
    """A lock renewed every ttl/3 stays held past its ttl; one left by a killed run (no renewal) is taken over
    after ttl by the server's clock, and the old holder learns it lost the lock. Fails without the takeover
    (seen: LockHeld 'renewed 6 s ago') and without renewal (seen: the live lock was taken over)."""
    url = f"s3://{bucket}/out/_mdf/lock"
    live = S3Lock(url, {"run_id": "live"}, ttl_s=3, settings=_settings(seaweed)).acquire()
    time.sleep(4.5)
    with pytest.raises(LockHeld, match="run_id live"):
        S3Lock(url, {"run_id": "other"}, ttl_s=3, settings=_settings(seaweed)).acquire()
    live._stop.set()  # the run is killed: nothing renews the lock any more
    live._thread.join()  # type: ignore[union-attr]
    time.sleep(5)
    taker = S3Lock(url, {"run_id": "taker"}, ttl_s=3, settings=_settings(seaweed)).acquire()
    try:
        live.renew()
        assert live.lost and "run_id taker" in live.lost
        with pytest.raises(LockHeld, match="lock was lost"):
            live.check()
        taker.check()
        live.release()  # must not delete the taker's lock
        assert taker.read()["token"] == taker.token  # type: ignore[index]
    finally:
        taker.release()
    assert taker.read() is None


def _part(path: str, ids: list[int]) -> None:
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), path)


def test_publish_replaces_the_old_run_and_commits_success(seaweed: SeaweedS3, bucket: str, tmp_path) -> None:
    st = Storage(_settings(seaweed))
    out = f"s3://{bucket}/out"
    for name, ids in (("a.parquet", [1, 2]), ("old-only.parquet", [3])):  # an earlier run's output
        _part(str(tmp_path / name), ids)
        st.put_file(str(tmp_path / name), f"{out}/{name}")
    old_manifest = {"run_id": "run-1", "files": [{"name": "a.parquet"}, {"name": "old-only.parquet"}]}
    st.write_bytes(f"{out}/{SUCCESS}", json.dumps(old_manifest).encode())
    st.write_bytes(f"{out}/_notes.txt", b"a user's file: publish must keep it")
    staging = staging_prefix(out, "run-2")
    for name, ids in (("a.parquet", [10, 11]), ("b.parquet", [12])):
        _part(str(tmp_path / name), ids)
        st.put_file(str(tmp_path / name), f"{staging}/{name}")
    # while staged, the output still reads as the old run: staging is under _mdf/, which readers skip
    fs, path = st.resolve(out)
    assert sorted(ds.dataset(path, filesystem=fs, format="parquet").to_table()["id"].to_pylist()) == [1, 2, 3]
    manifest = publish(st, out, "run-2")
    assert [f["name"] for f in manifest["files"]] == ["a.parquet", "b.parquet"]
    # the earlier run's parts are replaced (its _SUCCESS lists them); an object mdf did not write stays
    assert [o.url for o in st.list(out)] == [f"{out}/a.parquet", f"{out}/b.parquet"]
    assert st.exists(f"{out}/_notes.txt")
    assert committed(st, out) == [f"{out}/a.parquet", f"{out}/b.parquet"]
    assert sorted(ds.dataset(path, filesystem=fs, format="parquet").to_table()["id"].to_pylist()) == [10, 11, 12]
    assert st.list(staging, hidden=True) == [] and not st.exists(f"{out}/_mdf/{INTENT}")


def test_a_publish_cut_short_is_rolled_forward(seaweed: SeaweedS3, bucket: str, tmp_path) -> None:
    """A run killed after writing its intent (and before ``_SUCCESS``) is finished by the next one: its staged
    part copied, its open multipart uploads completed (one already was: completing it again is no error), and an
    upload no intent names (a killed run's) aborted. (Fails with the sweep left out: the stray upload stayed
    open: seen.)"""
    st = Storage(_settings(seaweed))
    out = f"s3://{bucket}/out"
    staging = staging_prefix(out, "run-k")
    _part(str(tmp_path / "p.parquet"), [7])
    st.put_file(str(tmp_path / "p.parquet"), f"{staging}/p.parquet")
    uploads = {n: multipart.begin(st, str(tmp_path / "p.parquet"), f"{out}/{n}") for n in ("q.parquet", "r.parquet")}
    multipart.begin(st, str(tmp_path / "p.parquet"), f"{out}/stray.parquet")
    multipart.complete(st, f"{out}/q.parquet", uploads["q.parquet"])
    names = ["p.parquet", "q.parquet", "r.parquet"]
    st.write_bytes(f"{out}/_mdf/{INTENT}", json.dumps({"run_id": "run-k", "names": names, "uploads": uploads}).encode())
    assert roll_forward(Storage(_settings(seaweed)), out) is not None
    assert committed(st, out) == [f"{out}/{n}" for n in names] and st.exists(f"{out}/{SUCCESS}")
    assert [o.url for o in st.list(out)] == [f"{out}/{n}" for n in names]
    assert st.s3_client().list_multipart_uploads(Bucket=bucket, Prefix="out/").get("Uploads", []) == []
    assert roll_forward(st, out) is None


def test_lock_and_publish_through_throttling(seaweed: SeaweedS3, bucket: str, tmp_path, make_proxy) -> None:
    """Take, renew, refuse, release and publish with 30 % of requests answered 503 SlowDown: each step
    retries instead of failing the run (or refusing a run because of its own lock). Fails with the lock's
    retries off (seen: "this run's lock was lost (could not be renewed: ... SlowDown ...)")."""
    proxy = make_proxy(slowdown=0.3, seed=11)
    ep = seaweed.endpoint
    assert ep is not None
    settings = StorageSettings(
        s3=S3Settings(endpoint_url=proxy.url, access_key_id=ep.access_key, secret_access_key=ep.secret_key)
    )
    url = f"s3://{bucket}/out/_mdf/lock"
    for i in range(3):
        lock = S3Lock(url, {"run_id": f"r{i}"}, ttl_s=30, settings=settings).acquire()
        lock.renew()
        lock.check()
        with pytest.raises(LockHeld, match=f"run_id r{i}"):
            S3Lock(url, {"run_id": "other"}, ttl_s=30, settings=settings).acquire()
        lock.release()
    st = Storage(settings)
    _part(str(tmp_path / "p.parquet"), [1, 2, 3])
    for name in ("a.parquet", "b.parquet", "c.parquet"):
        st.put_file(str(tmp_path / "p.parquet"), f"{staging_prefix(f's3://{bucket}/out', 'run')}/{name}")
    uploads = {"d.parquet": multipart.begin(st, str(tmp_path / "p.parquet"), f"s3://{bucket}/out/d.parquet")}
    publish(st, f"s3://{bucket}/out", "run", [f"{n}.parquet" for n in "abcd"], uploads=uploads)
    assert committed(st, f"s3://{bucket}/out") == [f"s3://{bucket}/out/{n}.parquet" for n in "abcd"]
    assert proxy.counts["slowdown"] > 10, proxy.counts


_HOLDER = """
import sys, time
from mdf.storage import S3Settings, StorageSettings
from mdf.storage.lock import S3Lock
s = StorageSettings(s3=S3Settings(endpoint_url=sys.argv[2], access_key_id=sys.argv[3], secret_access_key=sys.argv[4]))
S3Lock(sys.argv[1], {"run_id": "killed"}, ttl_s=3, settings=s).acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_a_lock_left_by_a_run_killed_with_sigkill_is_taken_over(seaweed: SeaweedS3, bucket: str) -> None:
    """A real process takes the lock and is killed by SIGKILL (nothing released): while it lived it was
    refused to others; 3 s (its ttl) after its last renewal the next run takes the lock over."""
    import signal
    import subprocess
    import sys

    ep = seaweed.endpoint
    assert ep is not None
    url = f"s3://{bucket}/out/_mdf/lock"
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, url, ep.url, ep.access_key, ep.secret_key], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(LockHeld, match=f"run_id killed, pid {proc.pid}"):
            S3Lock(url, {"run_id": "next"}, ttl_s=3, settings=_settings(seaweed)).acquire()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    deadline = time.monotonic() + 15
    while True:
        try:
            lock = S3Lock(url, {"run_id": "next"}, ttl_s=3, settings=_settings(seaweed)).acquire()
            break
        except LockHeld:
            assert time.monotonic() < deadline, "a dead run's lock was never taken over"
            time.sleep(0.5)
    assert lock.read()["holder"]["run_id"] == "next"  # type: ignore[index]
    lock.release()


def test_the_lock_needs_botocore_only_not_boto3(seaweed: SeaweedS3, bucket: str) -> None:
    """The lock's client is botocore's own (boto3 also imports s3transfer: ~0.06 s more of every s3:// run's
    claim). A fresh process takes and releases a lock without importing boto3. Fails with the boto3 session:
    seen ('boto3 imported')."""
    ep = seaweed.endpoint
    assert ep is not None
    code = (
        "import sys\n"
        "from mdf.storage import S3Settings, StorageSettings\n"
        "from mdf.storage.lock import S3Lock\n"
        f"s = StorageSettings(s3=S3Settings(endpoint_url={ep.url!r}, access_key_id={ep.access_key!r}, "
        f"secret_access_key={ep.secret_key!r}))\n"
        f"lock = S3Lock('s3://{bucket}/out/_mdf/lock', settings=s).acquire()\n"
        "lock.release()\n"
        "assert 'boto3' not in sys.modules, 'boto3 imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_sweep_that_cannot_list_uploads_warns_and_lets_the_run_go_on(caplog) -> None:
    """An open upload left behind holds storage, not data anyone sees: a listing that fails for good is a
    warning naming the output, not a failed claim or publish. Here the endpoint refuses connections (or, with no
    credentials in the environment, botocore gives up first); in practice it is a policy without
    s3:ListBucketMultipartUploads. (Fails with the listing's error raised: seen.)"""
    settings = StorageSettings(s3=S3Settings(endpoint_url="http://127.0.0.1:9", max_attempts=1, connect_timeout_s=1))
    with caplog.at_level("WARNING", logger="mdf"):
        assert multipart.sweep(Storage(settings), "s3://b/out") == 0
    assert any("s3://b/out: open uploads not swept" in r.getMessage() for r in caplog.records)
