"""Key-state snapshots on Ray are written and read by the driver, in the driver's folders.

A bucket actor may live on another machine: had it written the snapshot path itself, the file would land on that
machine's disk (or, for a relative output path, under the actor's working directory), while the checkpoint
manifest, its S3 mirror and ``--resume`` look for it in the driver's output folder. The bucket actors send their
bytes and the driver writes them (and reads them back for a restore).
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow.parquet as pq
import pytest

from mdf.executor.ray.buckets import ray_key_state

pytest.importorskip("ray")
pytestmark = pytest.mark.usefixtures("local_ray")  # mdf.testing's: one Ray for the module's runs


def u64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


def test_snapshot_files_land_in_the_drivers_folder_and_restore_from_it(tmp_path, monkeypatch):
    """A relative snapshot folder resolves against the driver's working directory, as the output path does.
    Fails when the bucket actors write and read the paths themselves (seen: the actors' snapshot() raised
    FileNotFoundError, the folder not being there under their own working directory)."""
    monkeypatch.chdir(tmp_path)
    os.makedirs("out/_mdf/state")
    s = ray_key_state(2, "snapshot-test-a")
    try:
        s.claim("ns", u64(1, 2, 3), "done", u64(0, 1, 2))
        s.claim("ns", u64(4, 5), "open", u64(0, 1))
        paths = s.snapshot("out/_mdf/state", 1, completed=["done"])
    finally:
        s.close()
    assert sorted(os.listdir("out/_mdf/state")) == ["bucket-0.1.pkl", "bucket-1.1.pkl"]
    assert all(os.path.getsize(p) > 0 for p in paths)
    r = ray_key_state(2, "snapshot-test-b")
    try:
        r.restore(paths)
        assert r.claim("ns", u64(4, 5, 6), "open", u64(0, 1, 2)).tolist() == [True, True, True]  # its own claims
        assert r.claim("ns", u64(1, 2), "done", u64(0, 1)).tolist() == [False, False]  # completed: forgotten
        assert r.stats()["ns"]["keys"] == 6
    finally:
        r.close()


@pytest.mark.parametrize("whole_shards", [True, False], ids=["whole_shards", "chain"])
def test_a_lost_bucket_stops_the_run_in_one_line_and_resume_completes_it(tmp_path, whole_shards):
    """A key-state bucket actor killed once a shard is committed (as when the node holding it dies): its keys are
    gone and a bucket is never restarted empty, so the run stops in one error naming the bucket and the way on,
    and ``--resume`` continues from the last snapshot to exactly the clean run's rows; the run log said where the
    bucket was. Seen red before ``KeyStateLost``, with no word of the key state or of --resume: whole shards,
    "stage 'length': operator 'exact_dedup' failed on batch 0 of shard 'cc-001': ActorDiedError: The actor died
    unexpectedly before finishing this task." and Ray's actor details over seven more lines; chains, "Ray:
    ActorDiedError: The actor died unexpectedly before finishing this task." (the driver's snapshot met it)."""
    from mdf.errors import MdfError
    from mdf.resolve import parse_recipe
    from mdf.run import run_recipe

    from .ray_helpers import kill_when_named, many_rows_parquet, text_recipe

    reader = {"type": "parquet", "paths": [many_rows_parquet(tmp_path / "in", files=4, rows=1000)]}
    ops = [{"delay_refiner": {"seconds_per_batch": 0.05}}, {"exact_dedup": {"column": "text"}}]
    inline = text_recipe(tmp_path / "clean", reader, {"type": "inline", "batch_rows": 100}, extra_ops=ops)
    clean = run_recipe(parse_recipe(inline))
    executor = {"type": "ray", "batch_rows": 100, "whole_shards": whole_shards}
    recipe = text_recipe(tmp_path / "ray", reader, executor, extra_ops=ops)
    recipe["state"] = {"snapshot_every_s": 0}
    killed: list[float] = []
    thread = kill_when_named("-bucket-0", killed, restart=False, after=tmp_path / "ray" / "out")
    with pytest.raises(MdfError) as err:
        run_recipe(parse_recipe(recipe))
    thread.join()
    line = str(err.value)
    assert killed and "\n" not in line, line
    assert "key-state bucket 0 (mdf-" in line and "was lost" in line and "--resume" in line, line
    log = (tmp_path / "ray" / "out" / "_mdf" / "run.log").read_text()
    assert "-bucket-0 on the node at 127.0.0.1" in log
    recipe["executor"]["resume"] = True
    resumed = run_recipe(parse_recipe(recipe))
    assert resumed.balanced and resumed.rows_read == clean.rows_read == 4000
    assert (resumed.rows_written, resumed.rows_rejected) == (clean.rows_written, clean.rows_rejected)
    texts = pq.read_table(tmp_path / "ray" / "out").column("text").to_pylist()
    assert sorted(texts) == sorted(pq.read_table(tmp_path / "clean" / "out").column("text").to_pylist())
