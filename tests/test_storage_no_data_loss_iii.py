"""Issue 46 on object storage, against a real SeaweedFS: ``--overwrite`` of an ``s3://`` output removes only the
objects the earlier run published (item 2), ``--resume`` refuses a blocklist object rewritten since the run
began (item 4), and a read-only identity or a missing botocore is exit 2 at validate (item 10). Every ``mdf`` is a
subprocess, the way users run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tests.storage_servers import READ_ONLY

from .conftest import ROOT, run_mdf
from .test_storage_write import FILTER, data, env, hold, inputs, objects, popen, recipe, release, wait_for_objects

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]


def test_overwrite_of_an_s3_output_keeps_objects_the_earlier_run_did_not_publish(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path
) -> None:
    """A user's ``my-own-data.parquet`` and ``_notes.txt`` under an earlier output prefix were deleted by
    ``--overwrite``'s publish (seen red on eefbc81: exit 0, ``my-own-data.parquet`` gone). Now exit 2 naming both,
    nothing changed; once they are moved out the overwrite publishes, and an object put there during the run (a
    race the claim cannot see) is left alone by the publish, outside ``_SUCCESS``."""
    paths = inputs(tmp_path / "in", n=2, rows=300)
    e = env(seaweed, tmp_path)
    first = recipe(tmp_path, paths, f"s3://{bucket}/out", f"s3://{bucket}/rej", [FILTER], "a")
    assert run_mdf("run", "-q", str(first), env=e).returncode == 0
    client = seaweed.client()
    client.put_object(Bucket=bucket, Key="out/my-own-data.parquet", Body=b"mine")
    client.put_object(Bucket=bucket, Key="out/_notes.txt", Body=b"my notes")
    before = objects(seaweed, bucket, "out")
    refused = run_mdf("run", "-q", "--overwrite", str(first), env=e)
    assert refused.returncode == 2, refused.stderr
    (line,) = [x for x in refused.stderr.splitlines() if x.strip()]
    assert line.startswith(f"error: writer.path: 's3://{bucket}/out' holds 2 object(s) the run that wrote it did "
                           "not publish ('_notes.txt', 'my-own-data.parquet')"), line  # fmt: skip
    assert objects(seaweed, bucket, "out") == before
    client.delete_object(Bucket=bucket, Key="out/_notes.txt")
    client.delete_object(Bucket=bucket, Key="out/my-own-data.parquet")
    # the publish of an overwrite that began before the user's object came: only the earlier run's parts go
    second = recipe(tmp_path, paths[:1], f"s3://{bucket}/out", f"s3://{bucket}/rej", [hold(tmp_path, 1), FILTER], "b")
    proc = popen(second, e, "--overwrite")
    try:
        wait_for_objects(seaweed, bucket, "out", proc, "_mdf/staging/")
        client.put_object(Bucket=bucket, Key="out/late.parquet", Body=b"mine, late")
    finally:
        release(tmp_path)
        assert proc.wait(timeout=240) == 0, proc.stderr.read() if proc.stderr else ""
    out = objects(seaweed, bucket, "out")
    assert sorted(data(out)) == ["in-0.parquet", "late.parquet"] and out["late.parquet"] == b"mine, late"
    assert [f["name"] for f in json.loads(out["_SUCCESS"])["files"]] == ["in-0.parquet"]


def test_resume_refuses_a_blocklist_object_rewritten_since_the_run_began(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path
) -> None:
    """``url_filter``'s blocklist named by its ``s3://`` URL, rewritten after the run: ``--resume`` of the s3://
    output continued with the other blocklist (seen red on eefbc81: exit 0). Now exit 2 naming the key and the URL."""
    paths = inputs(tmp_path / "in", n=2, rows=300)
    e = env(seaweed, tmp_path)
    client = seaweed.client()
    client.put_object(Bucket=bucket, Key="lists/block.txt", Body=b"site3.example\n")
    block = {"url_filter": {"blocklist": f"s3://{bucket}/lists/block.txt", "column": "text"}}
    r = recipe(tmp_path, paths, f"s3://{bucket}/out", f"s3://{bucket}/rej", [block, FILTER], "a")
    assert run_mdf("run", "-q", str(r), env=e).returncode == 0
    client.put_object(Bucket=bucket, Key="lists/block.txt", Body=b"site4.example\nsite5.example\n")
    resumed = run_mdf("run", "-q", "--resume", str(r), env=e)
    assert resumed.returncode == 2, resumed.stderr
    (line,) = [x for x in resumed.stderr.splitlines() if x.strip()]
    assert f"cannot --resume it: stages[0].operators[0].blocklist: 's3://{bucket}/lists/block.txt' changed" in line


def test_a_read_only_identity_is_exit_2_at_validate_before_any_work(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path
) -> None:
    """Credentials that may read but not write: ``mdf validate`` said ok and ``mdf run`` failed at the output's
    lock (seen red on eefbc81: validate exit 0, run exit 1 "put failed: AccessDenied"). Now both exit 2, one line
    naming ``writer.path``, nothing written."""
    paths = inputs(tmp_path / "in", n=1, rows=100)
    e = {**env(seaweed, tmp_path), "AWS_ACCESS_KEY_ID": READ_ONLY[0], "AWS_SECRET_ACCESS_KEY": READ_ONLY[1]}
    r = recipe(tmp_path, paths, f"s3://{bucket}/out", str(tmp_path / "rej"), [FILTER], "a")
    for command in (("validate",), ("run", "-q")):
        result = run_mdf(*command, str(r), env=e)
        assert result.returncode == 2, result.stderr
        (line,) = [x for x in result.stderr.splitlines() if x.strip()]
        assert line.startswith(f"error: writer.path: 's3://{bucket}/out' cannot be written with these credentials")
        assert "AccessDenied" in line and READ_ONLY[1] not in line, line
    assert objects(seaweed, bucket, "out") == {} and not (tmp_path / "rej").exists()


def test_a_missing_botocore_is_exit_2_at_validate(seaweed: SeaweedS3, bucket: str, tmp_path: Path) -> None:
    """Without botocore (``pip install mdf-core`` without ``[storage]``) an s3:// output passed ``mdf validate``
    (seen red on eefbc81: validate exit 0; the run was refused at its lock, after claiming the output, naming
    ``pip install boto3``). Now exit 2 in both before any work, naming the install."""
    paths = inputs(tmp_path / "in", n=1, rows=100)
    r = recipe(tmp_path, paths, f"s3://{bucket}/out", str(tmp_path / "rej"), [FILTER], "a")
    hide = "import sys; sys.modules['botocore'] = None; from mdf.cli import main; main()"
    for command in (("validate",), ("run", "-q")):
        result = subprocess.run([sys.executable, "-c", hide, *command, str(r)], cwd=ROOT, capture_output=True,
                                text=True, env={**os.environ, **env(seaweed, tmp_path)}, timeout=300)  # fmt: skip
        assert result.returncode == 2, result.stderr
        (line,) = [x for x in result.stderr.splitlines() if x.strip()]
        assert line == (
            f"error: writer.path: 's3://{bucket}/out': an s3:// output needs botocore (its lock and publish use "
            "conditional PUTs): pip install 'mdf-core[storage]'"
        ), line
