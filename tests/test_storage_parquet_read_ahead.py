"""A remote Parquet file's next column chunks are fetched while the current one decodes (mdf.io.ranges_ahead),
and what the reader returns is the file's, whatever the plan says."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from mdf.io.parquet import _chunk_ranges
from mdf.io.ranges_ahead import RangesAhead

from .conftest import run_mdf

pytest_plugins = ["tests.storage_fixtures"]  # the seaweed and bucket fixtures


def _file(path: Path, rows: int = 40_000, groups: int = 8) -> pa.Table:
    table = pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "url": [f"http://h{i % 97}.example/{i}" for i in range(rows)],
        "text": [os.urandom(40).hex() * (1 + i % 5) for i in range(rows)],
    })  # fmt: skip
    pq.write_table(table, path, row_group_size=rows // groups, compression="zstd")
    return table


@pytest.mark.parametrize("columns", [None, ["id", "text"]], ids=["all", "projected"])
def test_the_plan_is_fetched_ahead_and_the_rows_are_the_files(tmp_path, columns):
    """Over a real file (``FileIO``: seek + readinto, what the S3 reader offers), with pieces of 64 KiB: most
    pieces come from the background thread, at most ``hold`` are held, and the batches equal a plain read.
    Seen red with ``_piece`` starting nothing ahead: gets_ahead 0."""
    path = tmp_path / "t.parquet"
    table = _file(path)
    size = path.stat().st_size
    raw = open(path, "rb", buffering=0)  # noqa: SIM115 - the stream closes it
    stream = RangesAhead(raw, size, block=64 << 10)
    held = []
    real = stream._piece

    def watching(i):
        held.append(len(stream._have))
        return real(i)

    stream._piece = watching  # type: ignore[method-assign]
    with pa.PythonFile(stream, mode="r") as f:
        pf = pq.ParquetFile(f, pre_buffer=False, buffer_size=64 << 10)
        stream.plan(_chunk_ranges(pf.metadata, range(pf.metadata.num_row_groups), columns))
        got = pa.Table.from_batches(list(pf.iter_batches(batch_size=3_000, columns=columns)))
    assert got.equals(table.select(columns) if columns else table)
    assert stream.gets_ahead > len(stream._pieces) // 2, (stream.gets_ahead, len(stream._pieces))
    assert max(held) <= stream.hold


def test_a_wrong_plan_costs_requests_never_bytes(tmp_path):
    """Ranges that are not the chunks (shifted, overlapping, past the end): the rows are still the file's."""
    path = tmp_path / "t.parquet"
    table = _file(path, rows=8_000, groups=4)
    size = path.stat().st_size
    raw = open(path, "rb", buffering=0)  # noqa: SIM115 - the stream closes it
    stream = RangesAhead(raw, size, block=16 << 10)
    with pa.PythonFile(stream, mode="r") as f:
        pf = pq.ParquetFile(f, pre_buffer=False, buffer_size=16 << 10)
        stream.plan([(o + 333, n // 2) for o, n in _chunk_ranges(pf.metadata, range(4), None)] + [(size - 50, 500)])
        assert pf.read().equals(table)


def test_a_run_reads_s3_parquet_ahead_with_the_rows_of_a_local_run(seaweed, bucket, tmp_path):
    """``mdf run`` of one s3:// Parquet file (8 row groups) keeps the same rows as the same recipe on the local
    file: the reader's plan (the projected columns of each group) drives the GETs."""
    local = tmp_path / "in.parquet"
    table = _file(local)
    seaweed.client().upload_file(str(local), bucket, "in/in.parquet")
    outs = {}
    for name, src in (("s3", f"s3://{bucket}/in/in.parquet"), ("local", str(local))):
        spec = {
            "reader": {"type": "parquet", "paths": [src], "columns": ["id", "text"]},
            "stages": [{"name": "s", "operators": [{"text_length_filter": {"min_length": 100}}]}],
            "writer": {"type": "parquet", "path": str(tmp_path / name)},
            "executor": {"type": "inline"},
        }
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(spec))
        done = run_mdf("run", "-q", str(tmp_path / f"{name}.yaml"), env=seaweed.endpoint.env())
        assert done.returncode == 0, done.stderr[-3000:]
        outs[name] = pq.read_table(tmp_path / name).sort_by("id")
    assert outs["s3"].equals(outs["local"])
    assert outs["s3"].num_rows == sum(len(t) >= 100 for t in table.column("text").to_pylist())
