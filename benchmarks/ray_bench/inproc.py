"""Run a recipe on mdf's Ray executor inside this process, timing the actors' start-up apart from the run."""

from __future__ import annotations

import cProfile
import time
from typing import Any


def run_ray_recipe(data: dict[str, Any], profiler: cProfile.Profile | None = None) -> dict[str, Any]:
    """Run ``data`` (a recipe mapping) with ``RayExecutor`` on the Ray this process already joined.

    ``metrics.wall_s`` runs from before the actors are created to the last commit; ``RayExecutor._start``
    (create the actors, wait until they are ready) is timed by wrapping the bound method on this one instance,
    so ``steady_s = wall_s - startup_s`` runs from the first chain submitted to the last shard committed.
    ``driver_cpu_s`` is this process's CPU time over the whole ``run()`` (all its threads, start-up included).
    """
    from mdf.executor.ray.executor import RayExecutor
    from mdf.resolve import parse_recipe
    from mdf.run import prepare

    recipe = parse_recipe(data)
    ex = RayExecutor(prepare(recipe), **recipe.executor.params)
    startup: list[float] = []
    original_start = ex._start

    def timed_start(*args: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original_start(*args)
        finally:
            startup.append(time.perf_counter() - t0)

    ex._start = timed_start  # type: ignore[method-assign]
    t0, cpu0 = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    metrics = ex.run()
    if profiler is not None:
        profiler.disable()
    cpu = time.process_time() - cpu0
    assert metrics.balanced, metrics.to_dict()
    return {
        "rows": metrics.rows_read,
        "kept": metrics.rows_written,
        "chains": metrics.batches,
        "startup_s": startup[0],
        "wall_s": metrics.wall_s,
        "steady_s": metrics.wall_s - startup[0],
        "total_s": time.perf_counter() - t0,  # also teardown: killing the actors, waiting for their CPUs back
        "driver_cpu_s": cpu,
        "max_in_flight": ex.max_in_flight,
        "peak_in_flight": ex.peak_in_flight,
        "replicas": ex.replicas,
        "stage_stats": [s.to_dict() for s in metrics.executor_metrics.stage_stats],
    }
