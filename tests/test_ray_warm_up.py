"""A Ray replica's first-batch warm-up is measured apart from its per-row cost and left out of the projection.

Why: a fresh replica's first batch pays for the process's first object-store reads and its operators' first
calls once (0.11-0.18 CPU-s over a steady 0.05-0.08 s batch in the namespace cluster's replicas). Counted as
per-row cost it inflated the projection from a short run, and a run with two replicas paid it twice: one of the
reasons the two-host run spent more CPU than projected (``tests/test_cluster_projection.py``).

Seen red: with :func:`mdf.executor.ray.actors.warm_up_cpu_s` not scaling the steady cost by the first batch's rows
(``first_cpu - steady``), the estimate test fails; with :meth:`RayMetrics.stage_costs` returning the whole CPU,
the projection test fails.
"""

from __future__ import annotations

import json

import pytest

from mdf.executor.ray.actors import warm_up_cpu_s
from mdf.metrics import RunMetrics
from mdf.projection import Measured
from mdf.resolve import parse_recipe
from mdf.run import run_recipe

from .ray_helpers import many_rows_parquet, text_recipe


def test_warm_up_is_the_first_batch_beyond_the_steady_cost_of_its_rows():
    # 10 batches of 100 rows at 0.01 s, the first 0.05 s: 0.04 s of warm-up
    assert warm_up_cpu_s((0.05, 100), 0.05 + 9 * 0.01, 1000) == pytest.approx(0.04)
    # a short first batch (40 rows) at the steady cost: no warm-up
    assert warm_up_cpu_s((0.004, 40), 0.004 + 0.1, 1040) == pytest.approx(0.0, abs=1e-12)
    assert warm_up_cpu_s((0.02, 100), 0.02, 100) == 0.0  # one batch: no steady cost to measure against
    assert warm_up_cpu_s(None, 0.0, 0) == 0.0  # a replica that got no batch
    assert warm_up_cpu_s((0.001, 100), 0.5, 1000) == 0.0  # a first batch cheaper than the rest: none


@pytest.mark.usefixtures("local_ray")
def test_projection_takes_the_stage_cpu_less_its_warm_up(tmp_path):
    reader = {"type": "parquet", "paths": [many_rows_parquet(tmp_path / "in", files=2, rows=2000)]}
    recipe = text_recipe(tmp_path, reader, {"type": "ray", "batch_rows": 500})
    run_recipe(parse_recipe(recipe))
    data = json.loads((tmp_path / "out" / "_mdf" / "metrics.json").read_text())
    stages = data["stage_stats"]
    assert all(0 <= s["warmup_cpu_s"] <= s["cpu_s"] for s in stages), stages
    for s in stages:  # a known warm-up, so the subtraction shows whatever the run measured
        s["warmup_cpu_s"] = s["cpu_s"] / 4
    measured = Measured.from_metrics(RunMetrics.from_dict(data))
    rows = data["rows_read"]
    assert rows == 4000
    for cost, s in zip(measured.stages, stages, strict=True):
        assert cost.name == s["name"]
        assert cost.cpu_s_per_row == pytest.approx(s["cpu_s"] * 3 / 4 / rows)
