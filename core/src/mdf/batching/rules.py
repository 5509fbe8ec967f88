"""The sizing rules, one pure function each, every one returning the number it chose and the evidence.

The rule set comes from Data-Juicer's partition size optimizer (modality multipliers, memory tiers, P90, the 2x
safety margin, the byte bounds, the skew cut, the minimum-batches and worker rules). The modalities' and
cost classes' numbers live with their classes (:mod:`mdf.profiles`), which plugins may add to. Each function takes
plain numbers and returns ``(value, Rule | None)``: ``None`` when the rule did not change anything, so
``mdf plan`` lists exactly the rules that fired, each with the numbers that made it fire.

Sizes are bytes; "MB" and "GB" in names and messages are binary (MiB, GiB), as in the seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mdf.executor.api import auto_workers
from mdf.profiles import Modality

MB = 1 << 20
GB = 1 << 30

SAFETY_MARGIN = 2.0  # intermediate buffers (tokenization, decoded pixels) the payload does not show
MIN_PARTITION_BYTES = 32 * MB  # below this, per-batch scheduling overhead dominates
MAX_PARTITION_BYTES = 512 * MB
MAX_SHARE_OF_MEMORY = 0.25  # no single batch above a quarter of available memory
PROCESSING_SHARE = 0.8  # 20 % of available memory stays with the OS, the object store and Python
CONCURRENT_BATCHES = 4  # batches assumed in flight per node when bounding one batch
SKEW_THRESHOLD = 0.7
SKEW_CUT = 0.8  # skewed data: 20 % smaller batches so one heavy batch does not stall a worker
MIN_BATCHES_ABOVE_ROWS = 10_000
PARTITIONS_PER_CORE = 1.5


@dataclass(frozen=True)
class Rule:
    """One rule that fired: its name, the numbers it used, and one line saying why."""

    name: str
    reason: str
    numbers: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.name, **self.numbers, "reason": self.reason}


def mb(n: float) -> float:
    """Bytes as MB, rounded for messages and JSON."""
    return round(n / MB, 3)


def sample_size(rows_total: int) -> tuple[int, Rule]:
    """Rows to sample: all below 1,000; 1 % (at least 1,000) up to 100,000; 0.1 % (at most 10,000) above.

    Above 100,000 rows the seed's 0.1 % would give 100 rows at 100,001, fewer than a 1,000-row set gets; mdf
    keeps the 1,000 floor there too so the estimate never gets worse as the data grows.
    """
    if rows_total < 1_000:
        n, regime = rows_total, "all rows (< 1,000)"
    elif rows_total <= 100_000:
        n, regime = max(1_000, math.ceil(rows_total * 0.01)), "1 % with at least 1,000 (1,000-100,000)"
    else:
        n, regime = max(1_000, min(10_000, math.ceil(rows_total * 0.001))), "0.1 % capped at 10,000 (> 100,000)"
    n = min(n, rows_total)
    return n, Rule("sampling", f"{regime}: sample {n:,} of {rows_total:,} rows", {"rows_total": rows_total, "n": n})


def p90(values: np.ndarray) -> float:
    """Nearest-rank 90th percentile: the smallest value at or above 90 % of the sample (0 when empty).

    P90 rather than the mean because a batch of average rows is not what runs a worker out of memory.
    """
    if len(values) == 0:
        return 0.0
    return float(np.sort(values)[math.ceil(0.9 * len(values)) - 1])


def skew(values: np.ndarray) -> float:
    """Coefficient of variation (population std / mean) of per-row bytes, clipped to [0, 1].

    0 = every row the same size; 1 = spread as wide as the mean or wider. 0 for fewer than 2 rows.
    """
    if len(values) < 2:
        return 0.0
    mean = float(np.mean(values))
    return 0.0 if mean <= 0 else min(1.0, float(np.std(values)) / mean)


def memory_tier(available_bytes: float) -> tuple[int, Rule]:
    """Target bytes per batch from available memory: < 16 GB: 32 MB; < 64: 64; < 256: 128; else 256."""
    gb = available_bytes / GB
    tier_mb = 32 if gb < 16 else 64 if gb < 64 else 128 if gb < 256 else 256
    return tier_mb * MB, Rule(
        "memory_tier", f"{gb:.1f} GB available -> {tier_mb} MB per batch", {"available_gb": round(gb, 2)}
    )


def complexity(modality: type[Modality], operators: list[tuple[str, float]]) -> tuple[float, Rule]:
    """Modality complexity plus each operator's cost-class weight: heavier pipelines get smaller batches."""
    base = modality.complexity
    total = round(base + sum(w for _, w in operators), 6)
    ops = ", ".join(f"{name} +{w:g}" for name, w in operators) or "no operators"
    return total, Rule(
        "complexity", f"{modality.name} {base:g} + {ops} = {total:g}", {"modality_complexity": base, "total": total}
    )


def skew_cut(budget: float, skew_value: float) -> tuple[float, Rule | None]:
    """Skew above 0.7: a batch 20 % smaller."""
    if skew_value <= SKEW_THRESHOLD:
        return budget, None
    cut = budget * SKEW_CUT
    return cut, Rule(
        "skew_cut",
        f"skew {skew_value:.2f} > {SKEW_THRESHOLD}: batch {mb(budget):g} -> {mb(cut):g} MB",
        {"skew": round(skew_value, 4), "from_mb": mb(budget), "to_mb": mb(cut)},
    )


def bound_bytes(budget: float, available_bytes: float) -> tuple[float, list[Rule]]:
    """Batch bytes within 32-512 MB, then never above 25 % of memory nor (memory x 0.8) / 4.

    The memory caps come last so they win over the 32 MB floor on a small machine: running slowly beats
    running out of memory.
    """
    rules: list[Rule] = []
    bounds = [
        ("min_batch_bytes", max, MIN_PARTITION_BYTES, "below the 32 MB floor"),
        ("max_batch_bytes", min, MAX_PARTITION_BYTES, "above the 512 MB ceiling"),
        ("max_share_of_memory", min, available_bytes * MAX_SHARE_OF_MEMORY, "above 25 % of available memory"),
        (
            "max_concurrent_share",
            min,
            available_bytes * PROCESSING_SHARE / CONCURRENT_BATCHES,
            f"above (available x {PROCESSING_SHARE}) / {CONCURRENT_BATCHES}",
        ),
    ]
    for name, pick, limit, why in bounds:
        new = pick(budget, limit)
        if new != budget:
            rules.append(
                Rule(
                    name, f"{mb(budget):g} MB is {why}: {mb(new):g} MB", {"from_mb": mb(budget), "limit_mb": mb(limit)}
                )
            )
            budget = new
    return budget, rules


def row_group_check(group_rows: int, group_bytes: float, budget: float) -> Rule | None:
    """Warn when a Parquet row group is bigger than a batch: the reader loads it whole, whatever the batch.

    Changes no number (the input is what it is); says how many rows per row group would fit.
    """
    if group_bytes <= budget or group_rows <= 0:
        return None
    fit = max(1, int(group_rows * budget / group_bytes))
    return Rule(
        "row_group_too_big",
        f"the largest row group is {mb(group_bytes):g} MB ({group_rows:,} rows) > {mb(budget):g} MB batch;"
        f" the reader loads it whole: rewrite the input with row groups of at most {fit:,} rows",
        {"group_rows": group_rows, "group_mb": mb(group_bytes), "rows_that_fit": fit},
    )


def rows_for_budget(budget: float, row_bytes: float, complexity_value: float) -> tuple[int, Rule]:
    """Target rows = batch bytes / (per-row memory x complexity), at least 1."""
    rows = max(1, int(budget / (row_bytes * complexity_value)))
    return rows, Rule(
        "target_rows",
        f"{mb(budget):g} MB / ({row_bytes:,.0f} B x {complexity_value:g}) = {rows:,} rows",
        {"budget_mb": mb(budget), "row_bytes": round(row_bytes), "complexity": complexity_value, "rows": rows},
    )


def cap_modality_rows(rows: int, modality: type[Modality]) -> tuple[int, Rule | None]:
    """Never more rows than the modality's maximum (per-row costs the bytes do not show)."""
    cap = modality.max_rows
    if rows <= cap:
        return rows, None
    return cap, Rule("modality_max_rows", f"{rows:,} rows > {modality.name} max {cap:,}", {"from": rows, "max": cap})


def min_batches(rows: int, rows_total: int, cores: int) -> tuple[int, Rule | None]:
    """Datasets above 10,000 rows get at least 1.5 x cores batches, so every core has work."""
    if rows_total <= MIN_BATCHES_ABOVE_ROWS:
        return rows, None
    want = math.ceil(PARTITIONS_PER_CORE * cores)
    cap = max(1, rows_total // want)
    if rows <= cap:
        return rows, None
    return cap, Rule(
        "min_batches",
        f"{rows_total:,} rows > {MIN_BATCHES_ABOVE_ROWS:,}: at least {want} batches (1.5 x {cores} cores)"
        f" -> at most {cap:,} rows each",
        {"from": rows, "batches_min": want, "rows": cap},
    )


def batch_count(rows: int, shard_rows: list[int]) -> int:
    """Batches a run makes: each shard is cut on its own, so its last batch may be short."""
    return sum(math.ceil(n / rows) for n in shard_rows if n > 0)


def workers(cores: int, shards: int) -> tuple[int, Rule]:
    """``workers: auto`` as the executor reads it (:func:`mdf.executor.api.auto_workers`: one per core, no more
    than there are shards), so ``mdf plan`` prints the number the run uses."""
    n = auto_workers(cores, shards)
    why = f"one per core: {n} of {cores}" if n == cores else f"only {shards} shard(s): {n} worker(s) of {cores} cores"
    return n, Rule("workers", why, {"cores": cores, "shards": shards, "workers": n})


def max_in_flight(batch_bytes: float, available_bytes: float, worker_count: int, batches: int) -> tuple[int, Rule]:
    """Batches alive at once: two per worker (one running, one queued), within 80 % of memory, at least 1."""
    by_memory = int(available_bytes * PROCESSING_SHARE / batch_bytes) if batch_bytes > 0 else 2 * worker_count
    n = max(1, min(2 * worker_count, by_memory, max(1, batches)))
    return n, Rule(
        "max_in_flight",
        f"min(2 x {worker_count} workers, {by_memory} batches of {mb(batch_bytes):g} MB in 80 % of memory,"
        f" {batches} batches) = {n}",
        {"by_workers": 2 * worker_count, "by_memory": by_memory, "batch_mb": mb(batch_bytes), "value": n},
    )


def split_replicas(costs: dict[str, float], total: int) -> dict[str, int]:
    """Share ``total`` replicas among stages in proportion to cost, each at least 1 (largest remainder)."""
    names = list(costs)
    if not names:
        return {}
    total = max(total, len(names))
    weights = np.array([max(costs[n], 0.0) for n in names], dtype=np.float64)
    if weights.sum() <= 0:
        weights = np.ones(len(names))
    share = 1 + weights / weights.sum() * (total - len(names))
    out = np.floor(share).astype(int)
    for i in np.argsort(-(share - out), kind="stable")[: total - int(out.sum())]:
        out[i] += 1
    return {n: int(v) for n, v in zip(names, out, strict=True)}
