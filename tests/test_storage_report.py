"""The report of an ``s3://`` run: sample rejected rows read back from the published S3 rejected output, and
``mdf report s3://...`` rebuilding ``<output>/_mdf/report.html`` from the metadata on S3, against a real
SeaweedFS. Every ``mdf`` is a subprocess, the way users run it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from .conftest import run_mdf
from .test_storage_write import FILTER, data, env, inputs, objects, recipe

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]


def rejected_texts(objs: dict[str, bytes]) -> list[str]:
    return [t for v in data(objs).values() for t in pq.read_table(pa.BufferReader(v)).column("text").to_pylist()]


def test_an_s3_runs_report_shows_rejected_rows_and_mdf_report_rebuilds_it_on_s3(
    seaweed: SeaweedS3, bucket: str, tmp_path: Path
) -> None:
    """The run's report on S3 shows sample rows of the S3 rejected output; ``mdf report s3://b/out`` prints the
    report's URL and writes it there again, samples included; a prefix with no run is one line naming it.
    (Fails on the code before: metrics.json recorded the rejected output as '<cwd>/s3:/<bucket>/rej': seen;
    with that fixed but the samples read from local folders only, the report had no sample row: seen;
    'mdf report s3://...' exited 1 with 'no _mdf/metrics.json': seen.)"""
    e = env(seaweed, tmp_path)
    paths = inputs(tmp_path / "in", n=2, rows=300)
    s3 = recipe(tmp_path, paths, f"s3://{bucket}/out", f"s3://{bucket}/rej", [FILTER], "s3")
    result = run_mdf("run", "-q", str(s3), env=e)
    assert result.returncode == 0, result.stderr[-3000:]
    out = objects(seaweed, bucket, "out")
    assert json.loads(out["_mdf/metrics.json"])["rejected_path"] == f"s3://{bucket}/rej"
    texts = rejected_texts(objects(seaweed, bucket, "rej"))
    assert texts and any(t in out["_mdf/report.html"].decode() for t in texts)
    seaweed.client().delete_object(Bucket=bucket, Key="out/_mdf/report.html")
    again = run_mdf("report", f"s3://{bucket}/out", env=e)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.strip() == f"s3://{bucket}/out/_mdf/report.html"
    page = objects(seaweed, bucket, "out")["_mdf/report.html"].decode()
    assert "text_length_filter" in page and any(t in page for t in texts)
    missing = run_mdf("report", f"s3://{bucket}/nothing", env=e)
    lines = [x for x in missing.stderr.splitlines() if x.strip()]
    assert missing.returncode != 0 and len(lines) == 1 and f"s3://{bucket}/nothing" in lines[0], missing.stderr
