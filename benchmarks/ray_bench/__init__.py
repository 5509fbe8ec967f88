"""Helpers of the ``bench_ray_*`` benchmarks (scripts run as subprocesses, shared data generation)."""
