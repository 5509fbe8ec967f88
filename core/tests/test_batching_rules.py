"""Each sizing rule on numbers worked out by hand (comments show the arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest

from mdf.batching import rules as R
from mdf.batching.decide import DataProfile, OperatorCost, Resources, decide
from mdf.batching.measure import StageCost
from mdf.batching.rules import GB, MB
from mdf.profiles import COST_CLASSES, Audio, Image, Modality, Multimodal, Text, Video

FILTER = [OperatorCost("clean", "some_filter", 0.2)]


def profile(modality: type[Modality], p90: float, rows_total: int = 5_000, skew: float = 0.0, **kw) -> DataProfile:
    return DataProfile(
        modality=modality,
        rows_total=rows_total,
        rows_sampled=min(rows_total, 1_000),
        p90_bytes=p90,
        mean_bytes=p90 / 2,
        skew=skew,
        seed_estimate_bytes=kw.pop("seed_estimate", 0.0),
        shard_rows=kw.pop("shard_rows", [rows_total]),
        **kw,
    )


def plan(p: DataProfile, memory_gb: float = 32, cores: int = 8, ops=FILTER, **kw):
    return decide(p, Resources(memory_gb * GB, cores), ops, ["clean"], **kw)


@pytest.mark.parametrize(
    ("rows_total", "expected", "regime"),
    [
        (0, 0, "all rows"),
        (999, 999, "all rows"),  # < 1,000: everything
        (1_000, 1_000, "1 %"),  # 1 % = 10, floor 1,000
        (50_000, 1_000, "1 %"),  # 1 % = 500, floor 1,000
        (100_000, 1_000, "1 %"),  # 1 % = 1,000
        (100_001, 1_000, "0.1 %"),  # 0.1 % = 101: mdf keeps the 1,000 floor
        (5_000_000, 5_000, "0.1 %"),  # 0.1 % = 5,000
        (20_000_000, 10_000, "0.1 %"),  # 0.1 % = 20,000, cap 10,000
    ],
)
def test_sampling_regimes(rows_total, expected, regime):
    n, rule = R.sample_size(rows_total)
    assert n == expected
    assert regime in rule.reason and rule.numbers == {"rows_total": rows_total, "n": expected}


@pytest.mark.parametrize(
    ("gb", "tier_mb"),
    [(1, 32), (15.9, 32), (16, 64), (63.9, 64), (64, 128), (255.9, 128), (256, 256), (1024, 256)],
)
def test_memory_tier_boundaries(gb, tier_mb):
    tier, rule = R.memory_tier(gb * GB)
    assert tier == tier_mb * MB
    assert f"-> {tier_mb} MB" in rule.reason


@pytest.mark.parametrize(
    ("values", "expected"),
    [([], 0.0), ([5], 5.0), (list(range(1, 11)), 9.0), (list(range(1, 101)), 90.0), ([10, 1, 1, 1], 10.0)],
)
def test_p90_is_nearest_rank(values, expected):
    # nearest rank: the ceil(0.9 n)-th smallest; 1..10 -> 9th = 9; 1..100 -> 90th = 90; 4 values -> 4th
    assert R.p90(np.array(values, dtype=float)) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [([7], 0.0), ([1, 1, 1, 1], 0.0), ([1, 3], 0.5), ([0, 0, 0, 10], 1.0), ([0, 0], 0.0)],
)
def test_skew_is_clipped_coefficient_of_variation(values, expected):
    # [1, 3]: mean 2, population std 1 -> 0.5; [0, 0, 0, 10]: mean 2.5, std 4.33 -> 1.73, clipped to 1
    assert R.skew(np.array(values, dtype=float)) == pytest.approx(expected)


@pytest.mark.parametrize(("skew", "after_mb"), [(0.5, 64.0), (0.7, 64.0), (0.71, 51.2), (1.0, 51.2)])
def test_skew_cut(skew, after_mb):
    budget, rule = R.skew_cut(64 * MB, skew)
    assert budget / MB == pytest.approx(after_mb)
    assert (rule is not None) == (skew > 0.7)


@pytest.mark.parametrize(
    ("budget_mb", "memory_gb", "fired", "after_mb"),
    [
        (64, 32, [], 64),
        (20, 32, ["min_batch_bytes"], 32),  # floor
        (600, 1024, ["max_batch_bytes"], 512),  # ceiling
        # 25 % of 0.5 GB = 128 MB, then (0.5 GB x 0.8) / 4 = 102.4 MB
        (256, 0.5, ["max_share_of_memory", "max_concurrent_share"], 102.4),
        # 600 MB: 25 % = 150 MB (no), x 0.8 / 4 = 120 MB
        (128, 600 / 1024, ["max_concurrent_share"], 120),
        # 100 MB machine: the floor raises nothing, the memory caps win: 25 MB then 20 MB
        (32, 100 / 1024, ["max_share_of_memory", "max_concurrent_share"], 20),
    ],
)
def test_byte_bounds(budget_mb, memory_gb, fired, after_mb):
    budget, rules = R.bound_bytes(budget_mb * MB, memory_gb * GB)
    assert [r.name for r in rules] == fired
    assert budget / MB == pytest.approx(after_mb)
    assert all({"from_mb", "limit_mb"} <= set(r.numbers) for r in rules)


@pytest.mark.parametrize(
    ("modality", "multiplier", "own_complexity"),
    [
        (Text, 1.0, 1.0),
        (Image, 5.0, 3.0),
        (Audio, 8.0, 5.0),
        (Video, 20.0, 15.0),
        (Multimodal, 10.0, 8.0),
    ],
)
def test_modality_table(modality, multiplier, own_complexity):
    assert (modality.memory_multiplier, modality.complexity) == (multiplier, own_complexity)
    assert modality.max_rows == 5 * modality.default_rows


def test_cost_class_weights_and_the_kinds_defaults():
    from mdf import Deduplicator, Filter, Refiner

    weights = {c.name: c.weight for c in COST_CLASSES}
    assert weights == {
        "model": 0.3,
        "embedding": 0.3,
        "extraction": 0.3,
        "filter": 0.2,
        "deduplication": 0.2,
        "cleaning": 0.1,
    }
    # each kind's base class declares its default: the weights the kinds had before cost classes existed
    assert [weights[k.cost_class] for k in (Filter, Deduplicator, Refiner)] == [0.2, 0.2, 0.1]


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"memory_multiplier": 0, "complexity": 1, "default_rows": 1, "max_rows": 1}, "memory_multiplier = 0"),
        ({"complexity": 1, "default_rows": 1, "max_rows": 1}, "memory_multiplier = None"),
        ({"memory_multiplier": 2, "complexity": 1, "default_rows": 10, "max_rows": 5}, "max_rows 5 < default_rows"),
    ],
)
def test_a_modality_with_bad_numbers_is_refused_when_defined(attrs, message):
    with pytest.raises(TypeError, match=message):
        type("Bad", (Modality,), {"name": "bad", **attrs})


def test_complexity_adds_operator_weights_to_the_modality():
    total, rule = R.complexity(Image, [("f", 0.2), ("r", 0.1), ("m", 0.3)])
    assert total == pytest.approx(3.6)  # 3 + 0.2 + 0.1 + 0.3
    assert rule.numbers == {"modality_complexity": 3.0, "total": 3.6}


# 32 GB -> 64 MB tier = 67,108,864 B; one filter adds 0.2 to the modality's complexity.
@pytest.mark.parametrize(
    ("modality", "p90", "row_memory", "complexity", "rows"),
    [
        (Text, 4_096, 8_192, 1.2, 6_826),  # 4,096 x 1 x 2; 67,108,864 / (8,192 x 1.2) = 6,826.7
        (Image, 200_000, 2_000_000, 3.2, 10),  # 200 KB x 5 x 2; 67,108,864 / 6,400,000 = 10.5
        (Audio, 100_000, 1_600_000, 5.2, 8),  # x 8 x 2; 67,108,864 / 8,320,000 = 8.07
        (Video, 50_000, 2_000_000, 15.2, 2),  # x 20 x 2; 67,108,864 / 30,400,000 = 2.2
        (Multimodal, 100_000, 2_000_000, 8.2, 4),  # x 10 x 2; 67,108,864 / 16,400,000 = 4.09
    ],
)
def test_rows_per_modality(modality, p90, row_memory, complexity, rows):
    p = plan(profile(modality, p90))
    assert p.row_memory_bytes == row_memory
    assert p.complexity == pytest.approx(complexity)
    assert p.tier_mb == 64 and p.batch_rows == rows
    assert p.rule("target_rows").numbers["rows"] == rows


def test_skew_cut_in_the_plan():
    # 64 MB x 0.8 = 53,687,091 B; / (8,192 x 1.2) = 5,461.3
    p = plan(profile(Text, 4_096, skew=0.8))
    assert p.batch_rows == 5_461
    assert p.rule("skew_cut").numbers == {"skew": 0.8, "from_mb": 64.0, "to_mb": 51.2}


def test_skew_cut_at_the_lowest_tier_is_undone_by_the_floor():
    # 15 GB -> 32 MB; x 0.8 = 25.6 MB < 32 MB floor -> 32 MB again: both rules are listed
    p = plan(profile(Text, 4_096, skew=0.9), memory_gb=15)
    assert p.rule("skew_cut") and p.rule("min_batch_bytes")
    assert p.batch_bytes == 32 * MB


def test_modality_max_rows():
    # 100 B x 1 x 2 = 200 B a row, no operators: 67,108,864 / 200 = 335,544 > 50,000 text rows
    p = plan(profile(Text, 100), ops=[])
    assert p.batch_rows == 50_000
    assert p.rule("modality_max_rows").numbers == {"from": 335_544, "max": 50_000}


@pytest.mark.parametrize(
    ("rows", "rows_total", "cores", "expected"),
    [
        (6_826, 10_000, 16, 6_826),  # not above 10,000 rows: no minimum
        (6_826, 10_001, 2, 3_333),  # ceil(1.5 x 2) = 3 batches: 10,001 // 3
        (6_826, 100_000, 8, 6_826),  # 12 batches allow 8,333 rows: no change
        (6_826, 100_000, 16, 4_166),  # 24 batches: 100,000 // 24
    ],
)
def test_min_partitions(rows, rows_total, cores, expected):
    out, rule = R.min_batches(rows, rows_total, cores)
    assert out == expected
    assert (rule is not None) == (out != rows)


def test_min_partitions_in_the_plan():
    p = plan(profile(Text, 4_096, rows_total=100_000), cores=16)
    assert p.batch_rows == 4_166 and p.batches == 25  # ceil(100,000 / 4,166)
    assert p.rule("min_batches").numbers["batches_min"] == 24


@pytest.mark.parametrize(
    ("cores", "shards", "expected"),
    [
        (8, 1, 1),  # fewer shards than cores: one worker per shard
        (8, 10, 8),  # one per core
        (1, 100, 1),  # at least one worker
        (16, 1_000, 16),
        (4, 0, 1),  # no input: still one
    ],
)
def test_workers(cores, shards, expected):
    n, rule = R.workers(cores, shards)
    assert n == expected and rule.numbers["workers"] == expected


@pytest.mark.parametrize(("cores", "shards"), [(8, 100), (8, 3), (2, 2), (16, 1_000), (3, 7)])
def test_auto_workers_means_what_the_inline_executor_runs(cores, shards, monkeypatch):
    """``workers: auto`` has one meaning: ``mdf plan`` printed 75 % of the cores (x 1.2 with many batches)
    while the inline executor ran one worker per core. Fails on that rule: seen (7 vs 8 with 8 cores and 100
    shards)."""
    from mdf.executor import inline
    from mdf.executor.inline import InlineParams

    monkeypatch.setattr(inline, "usable_cores", lambda: cores)
    assert R.workers(cores, shards)[0] == InlineParams().worker_count(shards)


def test_max_in_flight():
    # 1 GB x 0.8 / 64 MB = 12.8 -> 12 batches fit; 2 x 8 workers = 16; 100 batches
    n, rule = R.max_in_flight(64 * MB, 1 * GB, 8, 100)
    assert n == 12 and rule.numbers["by_memory"] == 12 and rule.numbers["by_workers"] == 16
    assert R.max_in_flight(64 * MB, 1 * GB, 8, 3)[0] == 3  # never more than there are batches
    assert R.max_in_flight(10 * GB, 1 * GB, 8, 100)[0] == 1  # at least one


@pytest.mark.parametrize(
    ("costs", "total", "expected"),
    [
        ({"a": 3.0, "b": 1.0}, 4, {"a": 3, "b": 1}),  # 1 + 3/4 x 2 = 2.5, 1 + 1/4 x 2 = 1.5: tie -> first
        ({"a": 1.0, "b": 1.0}, 1, {"a": 1, "b": 1}),  # every stage gets one
        ({"a": 0.0, "b": 0.0}, 4, {"a": 2, "b": 2}),  # no cost known: even
        ({"a": 9.0, "b": 1.0}, 12, {"a": 10, "b": 2}),  # 1 + 0.9 x 10 = 10, 1 + 0.1 x 10 = 2
    ],
)
def test_split_replicas(costs, total, expected):
    assert R.split_replicas(costs, total) == expected


def test_measured_amplification_replaces_a_smaller_multiplier():
    # (100,000 + 700,000) / 100,000 = x8 > text's x1: 4,096 x 8 x 2 = 65,536; / (65,536 x 1.2) -> 853 rows
    cost = StageCost("clean", 100, 0.5, 700_000, 100_000)
    p = plan(profile(Text, 4_096), measured=[cost])
    assert p.row_memory_bytes == 65_536 and p.batch_rows == 853
    assert p.rule("measured_amplification").numbers == {"stage": "clean", "measured": 8.0, "fixed": 1.0}
    assert "measured seconds" in p.rule("replicas").reason


def test_measured_amplification_never_grows_batches():
    cost = StageCost("clean", 100, 0.5, 0, 100_000)  # x1 < image's x5
    p = plan(profile(Image, 200_000), measured=[cost])
    assert p.rule("measured_amplification") is None and p.batch_rows == 10


def test_default_rows_without_a_sample():
    p = plan(profile(Video, 0, rows_total=0, shard_rows=[]))
    assert p.batch_rows == 400 and p.rule("default_rows") and p.batches == 0


def test_fixed_batch_rows_are_kept_and_drive_the_rest():
    p = plan(profile(Text, 4_096, rows_total=1_500, shard_rows=[1_000, 500]), fixed_batch_rows=100)
    assert p.batch_rows == 100 and p.batches == 15  # 10 + 5: each shard is cut on its own
    assert p.rule("fixed_batch_rows")


def test_row_group_too_big():
    rule = R.row_group_check(1_000, 200 * MB, 64 * MB)
    assert rule.numbers["rows_that_fit"] == 320  # 1,000 x 64 / 200
    assert R.row_group_check(1_000, 10 * MB, 64 * MB) is None


def test_seed_comparison_is_visible():
    # the seed's 1,000 B a row: 1,000 x 1 x 2 = 2,000; 67,108,864 / (2,000 x 1.2) = 27,962 rows
    p = plan(profile(Text, 4_096, seed_estimate=1_000))
    assert p.rule("seed_comparison").numbers == {"seed_rows": 27_962, "rows": 6_826}


def test_json_has_every_choice_and_rule_numbers():
    out = plan(profile(Text, 4_096)).to_json()
    for key in ("modality", "rows_total", "rows_sampled", "p90_bytes", "seed_estimate_bytes", "skew", "tier_mb"):
        assert key in out
    for key in ("batch_rows", "batches", "workers", "max_in_flight", "replicas", "rules"):
        assert key in out
    assert all("rule" in r and "reason" in r for r in out["rules"])
    # 6,826 rows in one 5,000-row shard: 1 batch, so 1 worker (base 6) and 1 batch in flight
    assert (out["batches"], out["workers"], out["max_in_flight"], out["replicas"]) == (1, 1, 1, {"clean": 1})
