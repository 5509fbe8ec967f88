"""The Ray executor's whole-shard mode (``whole_shards``, :mod:`mdf.executor.ray.shards`) on a real local Ray.

When every stage runs in one actor, each replica reads, processes and writes whole shards; the driver only hands
out shards and counts. Checked here: when the mode is chosen, that its output is the inline run's, that a replica
killed mid-shard costs a re-run of the shard and no row (the key state's claims are idempotent per shard slot,
so a re-run streaming dedup keeps the same rows), and that a damaged file under ``on_damaged_input: fail``
stops the run before its shard is written.
"""

from __future__ import annotations

import gzip
import time

import pyarrow.parquet as pq
import pytest
import ray

from mdf.errors import MdfError
from mdf.resolve import parse_recipe
from mdf.run import run_recipe

from .ray_helpers import DATA, assert_same_outputs, kill_when_named, many_rows_parquet, text_recipe

pytestmark = pytest.mark.usefixtures("local_ray")  # mdf.testing's: one Ray for the module's runs


def _run(tmp_path, reader, executor, **kw):
    return run_recipe(parse_recipe(text_recipe(tmp_path, reader, executor, **kw)))


@pytest.mark.parametrize(
    ("extra", "chosen"),
    [
        ({}, True),  # the two stages fuse into one actor: whole shards
        ({"whole_shards": False}, False),
        ({"max_in_flight": 3}, False),  # a chain bound asks for chains
        ({"max_bytes_in_flight": 1 << 20}, False),
        ({"fuse_stages": False}, False),  # two actors: a chain pipelines across them
        ({"fuse_stages": False, "whole_shards": True}, True),  # asked for: one actor runs both stages
    ],
)
def test_whole_shards_when_one_actor_runs_every_stage_and_the_output_is_inline_s(tmp_path, extra, chosen):
    """Seen red with ``auto`` mapped to chains (the first case), and with the mode's check inverted."""
    reader = {"type": "parquet", "paths": [many_rows_parquet(tmp_path / "in", files=3, rows=1500)]}
    inline = _run(tmp_path / "inline", reader, {"type": "inline", "batch_rows": 200})
    m = _run(tmp_path / "ray", reader, {"type": "ray", "batch_rows": 200, **extra}, replicas=2)
    stats = m.executor_metrics
    assert stats.whole_shards is chosen
    assert m.balanced and (m.rows_read, m.rows_written) == (inline.rows_read, inline.rows_written)
    assert_same_outputs(tmp_path / "inline" / "out", tmp_path / "ray" / "out")
    assert_same_outputs(tmp_path / "inline" / "rejected", tmp_path / "ray" / "rejected")
    if chosen:  # every stage's counts and the writers' time come back from the replicas
        assert m.stages[0].operators[0].rows_in == inline.rows_read
        assert stats.writer_stats.busy_s > 0 and stats.writer_stats.cpu_s > 0
        assert 1 <= stats.peak_in_flight <= stats.max_in_flight == stats.stage_stats[0].replicas


def test_whole_shards_true_with_stages_of_other_resources_is_one_clear_error(tmp_path):
    """``whole_shards: true`` puts every stage in one actor, so stages that ask for other resources cannot all
    have theirs: one line naming the stage and the fix, before any shard is read. Seen red without the check: the run
    went ahead with the first stage's resources for both."""
    reader = {"type": "parquet", "paths": [many_rows_parquet(tmp_path / "in", files=2, rows=200)]}
    recipe = text_recipe(tmp_path, reader, {"type": "ray", "whole_shards": True})
    recipe["stages"][1]["resources"] = {"cpu": 0.5}
    with pytest.raises(MdfError, match=r"whole_shards: true .* stages\[1\] 'length' asks for other resources"):
        run_recipe(parse_recipe(recipe))
    assert not list((tmp_path / "out").rglob("*.parquet"))


def test_fewer_shards_than_replicas_keep_chains(tmp_path):
    """One shard and two replicas: whole shards would leave a replica idle, while chains spread the shard's
    batches over both, so ``auto`` keeps chains. Seen red without the shard count in the choice."""
    reader = {"type": "parquet", "paths": [many_rows_parquet(tmp_path / "in", files=1, rows=1000)]}
    m = _run(tmp_path / "ray", reader, {"type": "ray", "batch_rows": 100}, replicas=2)
    stats = m.executor_metrics
    assert not stats.whole_shards and stats.stage_stats[0].replicas == 2 and m.balanced


def test_a_replica_killed_mid_shard_reruns_the_shard_and_the_dedup_keeps_the_same_rows(tmp_path):
    """A whole-shard replica killed 1 s into its first shard: Ray restarts it and retries the call, the shard
    runs again from its start into a fresh part, and the streaming exact dedup answers the re-run's claims as it
    answered the first run's. Rows and kept texts are the clean run's. Seen red with the re-run's claims made
    fresh (``forget`` the shard's bits, i.e. claims not idempotent): the re-run's rows all became duplicates."""
    paths = many_rows_parquet(tmp_path / "in", files=2, rows=2000)  # each text ~100 times: dedup drops most
    reader = {"type": "parquet", "paths": [paths]}
    ops = [{"delay_refiner": {"seconds_per_batch": 0.1}}, {"exact_dedup": {"column": "text"}}]
    clean = _run(tmp_path / "clean", reader, {"type": "inline", "batch_rows": 100}, extra_ops=ops)
    killed: list[float] = []
    thread = kill_when_named("clean+length-0", killed)
    m = _run(tmp_path / "ray", reader, {"type": "ray", "batch_rows": 100}, extra_ops=ops)
    finished = time.time()
    thread.join()
    assert killed and killed[0] < finished - 0.5, "the replica was not killed mid-run"
    assert m.executor_metrics.whole_shards and m.balanced and m.rows_read == 4000
    assert (m.rows_written, m.rows_rejected) == (clean.rows_written, clean.rows_rejected)
    texts = pq.read_table(tmp_path / "ray" / "out").column("text").to_pylist()
    assert len(texts) == len(set(texts)) == clean.rows_written
    assert set(texts) == set(pq.read_table(tmp_path / "clean" / "out").column("text").to_pylist())


def test_a_replica_lost_for_good_gives_its_shard_to_another_and_the_run_completes(tmp_path):
    """A replica that will not come back (killed without restart, as when its node is gone and no other node has
    room for it): its call ends in an actor error, the driver drops it and runs its shard again on the other
    replica, and the run ends with the clean run's rows and one warning. Seen red with the shard not put back in
    the queue (5,000 of 6,000 rows read) and with the actor error re-raised (the run failed). The kill comes once
    a shard is committed, 5 of 6 shards not yet: killed 1 s after its name instead, a CI run's replica was already idle
    with no shard left, so nothing was lost to re-run (and the stats call failed: the next test)."""
    paths = many_rows_parquet(tmp_path / "in", files=6, rows=1000)
    reader = {"type": "parquet", "paths": [paths]}
    ops = [{"delay_refiner": {"seconds_per_batch": 0.1}}, {"exact_dedup": {"column": "text"}}]
    clean = _run(tmp_path / "clean", reader, {"type": "inline", "batch_rows": 100}, extra_ops=ops)
    killed: list[float] = []
    thread = kill_when_named("clean+length-1", killed, restart=False, after=tmp_path / "ray" / "out")
    m = _run(tmp_path / "ray", reader, {"type": "ray", "batch_rows": 100}, extra_ops=ops, replicas=2)
    thread.join()
    assert killed, "the replica was not killed"
    assert m.executor_metrics.whole_shards and m.balanced and m.rows_read == 6000
    assert (m.rows_written, m.rows_rejected) == (clean.rows_written, clean.rows_rejected)
    texts = pq.read_table(tmp_path / "ray" / "out").column("text").to_pylist()
    assert len(texts) == len(set(texts)) == clean.rows_written
    assert len(m.executor_metrics.stage_stats[0].replica_utilisation) == 1  # the lost replica's stats are gone
    assert m.executor_metrics.replicas_lost == 1
    assert "a replica was lost" in (tmp_path / "ray" / "out" / "_mdf" / "run.log").read_text()


def test_a_replica_that_dies_after_its_last_shard_does_not_fail_a_complete_run(tmp_path, monkeypatch):
    """A replica that dies once every shard is counted (its node lost as the run ends) takes only its busy time
    with it; the run, whose rows are all committed, succeeds. Seen red (this session's CI) before
    ``alive_stats``: the stats call on the dead replica failed the run with an ActorDiedError."""
    from mdf.executor.ray import book

    gather = book.collect

    def kill_then_gather(pipe, *args):
        ray.kill(pipe.stages[0][-1], no_restart=True)
        time.sleep(1.0)  # the kill is asynchronous: let the process go
        return gather(pipe, *args)

    monkeypatch.setattr(book, "collect", kill_then_gather)
    reader = {"type": "parquet", "paths": [many_rows_parquet(tmp_path / "in", files=2, rows=500)]}
    m = _run(tmp_path / "ray", reader, {"type": "ray", "batch_rows": 100}, replicas=2)
    assert m.balanced and m.rows_read == 1000
    assert len(m.executor_metrics.stage_stats[0].replica_utilisation) == 1


def test_damage_under_fail_stops_the_run_before_the_shard_is_written(tmp_path):
    """The replica checks each batch for damage before writing it, as an inline shard thread does: a cut
    ``.gz`` with ``on_damaged_input: fail`` ends the run in one error naming the file, and no part of it is
    committed. Seen red with the check left to the driver: the cut file's part was already committed then."""
    src = tmp_path / "in"
    src.mkdir()
    whole = gzip.compress(DATA.read_bytes() * 20)
    (src / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    recipe = text_recipe(tmp_path, {"type": "jsonl", "paths": [str(src / "*")]}, {"type": "ray", "batch_rows": 50})
    recipe["on_damaged_input"] = "fail"
    with pytest.raises(MdfError, match=r"damaged input: .*cut\.jsonl\.gz"):
        run_recipe(parse_recipe(recipe))
    assert not list((tmp_path / "out").rglob("*.parquet"))
