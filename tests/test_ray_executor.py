"""The Ray executor on a real local Ray: same rows as inline, backpressure, kill a replica, placement."""

from __future__ import annotations

import gzip
import json
import shutil
import threading
import time

import pytest
import ray

from mdf.errors import MdfError
from mdf.executor.inline_metrics import InlineMetrics
from mdf.executor.ray.metrics import RayMetrics
from mdf.metrics import RunMetrics
from mdf.resolve import parse_recipe
from mdf.run import run_recipe

from .ray_helpers import DATA, assert_same_outputs, many_rows_parquet, text_recipe

pytestmark = pytest.mark.usefixtures("local_ray")  # mdf.testing's: one Ray for the module's runs


def run_both(tmp_path, reader, executor_extra=None, **kw):
    """Run the recipe inline and on Ray into two folders; return both metrics. ``executor_extra`` holds Ray's
    parameters; inline gets only the common ``batch_rows`` (each executor validates its own keys)."""
    out = {}
    for kind in ("inline", "ray"):
        folder = tmp_path / kind
        extra = {k: v for k, v in (executor_extra or {}).items() if kind == "ray" or k == "batch_rows"}
        r = text_recipe(folder, reader, {"type": kind, **extra}, **kw)
        out[kind] = run_recipe(parse_recipe(r))
    return out


def test_jsonl_with_bad_lines_same_rows_as_inline(tmp_path):
    m = run_both(tmp_path, {"type": "jsonl", "paths": [str(DATA)]}, {"batch_rows": 3})
    assert_same_outputs(tmp_path / "inline" / "out", tmp_path / "ray" / "out")
    assert_same_outputs(tmp_path / "inline" / "rejected", tmp_path / "ray" / "rejected")
    for key in ("rows_read", "rows_written", "rows_rejected"):
        assert getattr(m["inline"], key) == getattr(m["ray"], key)
    assert m["ray"].balanced and m["ray"].reader_reasons == m["inline"].reader_reasons


def test_many_shards_two_replicas_row_group_shards_same_as_inline(tmp_path):
    paths = many_rows_parquet(tmp_path / "in", files=3, rows=3000)
    reader = {"type": "parquet", "paths": [paths], "row_groups_per_shard": 2}
    m = run_both(tmp_path, reader, {"batch_rows": 256, "loaders": 2}, replicas=2)
    assert_same_outputs(tmp_path / "inline" / "out", tmp_path / "ray" / "out")
    assert_same_outputs(tmp_path / "inline" / "rejected", tmp_path / "ray" / "rejected")
    for a, b in zip(m["inline"].operators(), m["ray"].operators(), strict=True):
        assert (a.rows_in, a.rows_out, a.reasons) == (b.rows_in, b.rows_out, b.reasons)
    stats = m["ray"].executor_metrics.stage_stats
    # same resources and replicas: the two stages run fused in one actor, of which the 2 CPUs hold 2
    assert [(s.actor, s.replicas) for s in stats] == [("clean+length", 2)] * 2
    assert m["ray"].executor_metrics.bottleneck in ("clean", "length", "(writers)")


def test_unfused_stages_get_their_own_actors(tmp_path):
    paths = many_rows_parquet(tmp_path / "in", files=2, rows=1000)
    reader = {"type": "parquet", "paths": [paths]}
    m = run_both(tmp_path, reader, {"batch_rows": 256, "fuse_stages": False}, replicas=2)
    assert_same_outputs(tmp_path / "inline" / "out", tmp_path / "ray" / "out")
    stats = m["ray"].executor_metrics.stage_stats
    assert [(s.actor, s.replicas) for s in stats] == [("clean", 1), ("length", 1)]  # mins first, then none left


def test_backpressure_bounds_batches_in_flight(tmp_path):
    paths = many_rows_parquet(tmp_path / "in", files=1, rows=2000)
    peaks = []
    for rows, name in ((2000, "small"), (10000, "large")):
        if name == "large":
            paths = many_rows_parquet(tmp_path / "in5", files=5, rows=2000)
        r = text_recipe(
            tmp_path / name,
            {"type": "parquet", "paths": [paths]},
            {"type": "ray", "batch_rows": 100, "max_in_flight": 3},
            extra_ops=[{"delay_refiner": {"seconds_per_batch": 0.01}}],
        )
        m = run_recipe(parse_recipe(r))
        assert m.rows_read == rows and m.balanced
        assert 1 <= m.executor_metrics.peak_in_flight <= 3
        peaks.append(m.executor_metrics.peak_bytes_in_flight)
    # 5x the input, same bound: bytes alive at once do not grow with the input
    assert peaks[1] <= peaks[0] * 1.5


def test_max_bytes_in_flight_caps_below_the_chain_count(tmp_path):
    paths = many_rows_parquet(tmp_path / "in", files=1, rows=1500)
    r = text_recipe(
        tmp_path / "o",
        {"type": "parquet", "paths": [paths]},
        {"type": "ray", "batch_rows": 100, "max_in_flight": 50, "max_bytes_in_flight": 1},
    )
    m = run_recipe(parse_recipe(r))
    assert m.executor_metrics.peak_in_flight == 1 and m.balanced


@pytest.mark.parametrize("whole_shards", [False, "auto"])  # a chain's stage actor; a whole-shard replica
def test_killed_stage_replica_costs_a_retry_not_data(tmp_path, whole_shards):
    """A stage actor killed mid-run: retried, no row lost or doubled. The kill comes 1 s after the actor's name
    is registered (not when it is ready), so the run is given ~4 s of work after that (40 batches of 0.1 s; at
    0.05 s the margin to the run's end was about a second on a fast machine)."""
    paths = many_rows_parquet(tmp_path / "in", files=2, rows=2000)
    reader = {"type": "parquet", "paths": [paths]}
    slow = [{"delay_refiner": {"seconds_per_batch": 0.1}}]
    clean = text_recipe(tmp_path / "clean", reader, {"type": "inline", "batch_rows": 100}, extra_ops=slow)
    run_recipe(parse_recipe(clean))
    killed = []

    def killer():
        deadline = time.time() + 60
        while time.time() < deadline and not killed:
            for actor in ray.util.list_named_actors(all_namespaces=False):
                if actor.endswith("length-0"):  # "clean+length" when the two stages are fused
                    time.sleep(1.0)  # let some batches through first
                    handle = ray.get_actor(actor)
                    ray.kill(handle, no_restart=False)
                    killed.append(time.time())
                    return
            time.sleep(0.05)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    executor = {"type": "ray", "batch_rows": 100, "whole_shards": whole_shards}
    r = text_recipe(tmp_path / "ray", reader, executor, extra_ops=slow)
    m = run_recipe(parse_recipe(r))
    finished = time.time()
    assert m.executor_metrics.whole_shards is (whole_shards == "auto")
    thread.join()
    assert killed, "the test never found the stage actor to kill"
    assert killed[0] < finished - 0.5, "the actor was killed only as the run ended"
    assert m.balanced and m.rows_read == 4000
    assert_same_outputs(tmp_path / "clean" / "out", tmp_path / "ray" / "out")
    assert_same_outputs(tmp_path / "clean" / "rejected", tmp_path / "ray" / "rejected")


def test_stage_that_cannot_be_placed_is_a_clear_error(tmp_path):
    r = text_recipe(tmp_path, {"type": "jsonl", "paths": [str(DATA)]}, {"type": "ray"})
    r["stages"][1]["resources"] = {"cpu": 1, "gpu": 1}
    with pytest.raises(MdfError, match=r"stages\[1\] 'length': cannot place 1 replica.*missing \['GPU'\]"):
        run_recipe(parse_recipe(r))
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.parquet"))


def test_metrics_json_has_stage_stats(tmp_path):
    r = text_recipe(tmp_path, {"type": "jsonl", "paths": [str(DATA)]}, {"type": "ray"})
    run_recipe(parse_recipe(r))
    data = json.loads((tmp_path / "out" / "_mdf" / "metrics.json").read_text())
    assert data["executor"] == "ray" and data["balanced"]
    assert {s["name"] for s in data["stage_stats"]} == {"clean", "length"}
    assert data["bottleneck"] in ("clean", "length", "(writers)")
    assert data["writer_stats"]["replicas"] >= 1 and data["writer_stats"]["busy_s"] > 0


@pytest.mark.parametrize("kind", ["inline", "ray"])
def test_metrics_json_round_trips_through_the_typed_loader(tmp_path, kind):
    """A real run's metrics.json (with a cluster-dedup pass, key state, bad lines and a damaged file) carries its
    version and reads back through RunMetrics.from_dict into the same JSON, with each record typed."""
    src = tmp_path / "in"
    src.mkdir()
    for name in ("a.jsonl", "b.jsonl"):  # the same lines twice: every kept text has a duplicate
        shutil.copy(DATA, src / name)
    whole = gzip.compress(DATA.read_bytes())
    cut = src / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    dedups = [{"exact_dedup": {"column": "text", "mode": "cluster"}}, {"exact_dedup": {"column": "url"}}]
    r = text_recipe(tmp_path, {"type": "jsonl", "paths": [str(src / "*")]}, {"type": kind}, extra_ops=dedups)
    ran = run_recipe(parse_recipe(r))
    path = tmp_path / "out" / "_mdf" / "metrics.json"
    data = json.loads(path.read_text())
    assert data["version"] == 1 and data["executor"] == kind and data["balanced"]
    m = RunMetrics.read_json(path)
    assert m.to_dict() == data
    assert m.to_dict() == ran.to_dict() | {"wall_s": data["wall_s"], "rows_per_s": data["rows_per_s"]}
    assert [s.name for s in m.stages] == ["clean", "length"]
    assert [op.name for op in m.operators()] == ["url_filter", "text_length_filter", "exact_dedup", "exact_dedup"]
    assert m.operators()[2].reasons["exact_dedup:duplicate"] > 0 and m.reader_reasons
    (damage,) = m.damaged
    assert damage.file == str(cut) and damage.error and str(cut) in damage.describe()
    (cluster_pass,) = m.passes
    assert cluster_pass.collect.endswith(":exact_dedup") and cluster_pass.clusters > 0
    (stats,) = m.key_state.values()  # the streaming dedup's (a cluster dedup's edges are not counted there)
    assert stats.keys > 0 and stats.buckets >= 1 and stats.bytes > 0
    assert m.context.recipe is not None and m.context.recipe["executor"]["type"] == kind
    assert m.context.machine is not None and m.context.machine.cpus >= 1
    assert sum(v[0] for v in m.shard_log.shards.values()) == m.rows_read
    assert m.timeline.ops and m.timeline.operators == 4
    if kind == "inline":
        assert isinstance(m.executor_metrics, InlineMetrics) and m.executor_metrics.workers >= 1
        assert m.executor_metrics.peak_bytes_in_flight > 0
    else:
        ray_m = m.executor_metrics
        assert isinstance(ray_m, RayMetrics) and {s.name for s in ray_m.stage_stats} == {"clean", "length"}
        assert ray_m.writer_stats is not None and ray_m.writer_stats.busy_s > 0
        assert 1 <= ray_m.peak_in_flight <= ray_m.max_in_flight and ray_m.bottleneck


def test_live_progress_counts_ray_replicas_when_ray_is_chosen_by_address(tmp_path):
    """The live bottleneck divides a stage's busy time by its replicas. Progress used to take them from the
    recipe only when ``executor.type`` was ``ray``, so a run sent to Ray by ``address:`` (or ``RAY_ADDRESS``)
    counted one replica per stage and named the wrong bottleneck. Now the executor passes the replicas it placed.
    Fails with progress.py's old ``plan.recipe.executor.type == "ray"`` test put back: seen ([1, 1])."""
    import io

    from rich.console import Console

    from mdf.progress import LiveProgress

    paths = many_rows_parquet(tmp_path / "in", files=1, rows=300)
    r = text_recipe(tmp_path / "o", {"type": "parquet", "paths": [paths]}, {"address": "local", "batch_rows": 100})
    for stage in r["stages"]:  # two small replicas per stage, placeable on a 2-core machine
        stage.update(replicas={"min": 2, "max": 2}, resources={"cpu": 0.25})
    progress = LiveProgress(Console(file=io.StringIO(), force_terminal=True))
    m = run_recipe(parse_recipe(r), progress=progress)
    assert m.executor == "ray" and m.balanced
    assert progress.replicas == [m.executor_metrics.replicas["clean"], m.executor_metrics.replicas["length"]]
    assert progress.replicas == [2, 2]
