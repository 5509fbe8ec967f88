"""Helpers of the ``bench_dedup_*`` benchmarks: cached inputs, timed subprocesses, peer scripts."""
