"""From a data profile and the machine to the numbers a run uses, recording every rule on the way.

Pure: no file is read here, so each number can be checked by hand in a test. The order is the seed's: per-row
memory (P90 payload x modality multiplier x safety margin), the memory tier, the skew cut, the byte bounds,
rows = bytes / (row memory x complexity), the modality's row cap, the minimum-batches rule, then workers,
batches in flight and replicas per stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mdf.batching import rules as R
from mdf.batching.measure import StageCost
from mdf.batching.rules import SAFETY_MARGIN, Rule
from mdf.profiles import Modality


@dataclass(frozen=True)
class DataProfile:
    """What sampling found, and the modality the reader and operators declare. Bytes are per row;
    ``shard_rows`` are rows per shard (for the batch count)."""

    modality: type[Modality]
    rows_total: int
    rows_sampled: int
    p90_bytes: float
    mean_bytes: float
    skew: float
    seed_estimate_bytes: float
    shard_rows: list[int]
    largest_row_group: tuple[int, float] = (0, 0.0)  # (rows, uncompressed bytes); Parquet only
    declared_by: list[str] = field(default_factory=list)  # "reader NAME" and operators declaring the modality
    modality_note: str = ""  # why, when nobody declared it (or who declared lighter ones)


@dataclass(frozen=True)
class Resources:
    """The memory and cores a plan is made for."""

    available_bytes: float
    cores: int


@dataclass(frozen=True)
class OperatorCost:
    """An operator's place in the recipe and its complexity weight."""

    stage: str
    name: str
    weight: float


@dataclass
class BatchPlan:
    """The chosen numbers and the rules that chose them (``to_json`` is what ``mdf plan --json`` prints).

    ``modality`` is the name of the modality sized for; ``declared_by`` says who declared it."""

    modality: str
    rows_total: int
    rows_sampled: int
    p90_bytes: float
    seed_estimate_bytes: float
    skew: float
    tier_mb: int
    row_memory_bytes: float
    complexity: float
    batch_bytes: float
    batch_rows: int
    batches: int
    workers: int
    max_in_flight: int
    replicas: dict[str, int]
    resources: Resources
    rules: list[Rule]
    measured: list[StageCost] = field(default_factory=list)
    declared_by: list[str] = field(default_factory=list)

    @property
    def batch_memory_bytes(self) -> float:
        """Estimated peak memory of one batch in a worker: rows x row memory x complexity."""
        return self.batch_rows * self.row_memory_bytes * self.complexity

    def rule(self, name: str) -> Rule | None:
        return next((r for r in self.rules if r.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "modality": self.modality,
            "modality_declared_by": self.declared_by,
            "rows_total": self.rows_total,
            "rows_sampled": self.rows_sampled,
            "p90_bytes": round(self.p90_bytes),
            "seed_estimate_bytes": round(self.seed_estimate_bytes),
            "skew": round(self.skew, 4),
            "tier_mb": self.tier_mb,
            "batch_rows": self.batch_rows,
            "batches": self.batches,
            "workers": self.workers,
            "max_in_flight": self.max_in_flight,
            "replicas": self.replicas,
            "row_memory_bytes": round(self.row_memory_bytes),
            "complexity": self.complexity,
            "batch_mb": R.mb(self.batch_bytes),
            "batch_memory_mb": R.mb(self.batch_memory_bytes),
            "available_gb": round(self.resources.available_bytes / R.GB, 2),
            "cores": self.resources.cores,
            "measured": [c.to_json() for c in self.measured],
            "rules": [r.to_json() for r in self.rules],
        }


def decide(
    profile: DataProfile,
    resources: Resources,
    operators: list[OperatorCost],
    stages: list[str],
    *,
    measured: list[StageCost] | None = None,
    fixed_batch_rows: int | None = None,
    rules: list[Rule] | None = None,
) -> BatchPlan:
    """Choose batch rows, batches, workers, batches in flight and replicas; ``rules`` is prepended as is.

    :param fixed_batch_rows: the recipe's own ``batch_rows`` when it is not ``auto``: kept, and the other
        numbers are derived from it.
    """
    fired: list[Rule] = list(rules or [])
    cfg = profile.modality
    why = "; ".join(p for p in (", ".join(profile.declared_by), profile.modality_note) if p)
    if profile.declared_by:
        why = f"declared by {why}"
    numbers = {
        "multiplier": cfg.memory_multiplier,
        "default_rows": cfg.default_rows,
        "max_rows": cfg.max_rows,
        "declared_by": profile.declared_by,
    }
    fired.append(Rule("modality", f"{cfg.name} ({why}): memory x{cfg.memory_multiplier:g}", numbers))
    fired.append(
        Rule(
            "payload_p90",
            f"P90 row payload {profile.p90_bytes:,.0f} B (mean {profile.mean_bytes:,.0f} B); the seed's"
            f" chars x 2 gives {profile.seed_estimate_bytes:,.0f} B",
            {"p90_bytes": round(profile.p90_bytes), "mean_bytes": round(profile.mean_bytes)},
        )
    )
    amplification = cfg.memory_multiplier
    measured = measured or []
    if measured:
        top = max(measured, key=lambda c: c.amplification)
        if top.amplification > amplification:
            fired.append(
                Rule(
                    "measured_amplification",
                    f"stage '{top.name}' measured x{top.amplification:.2f} > {cfg.name}'s"
                    f" x{amplification:g}: using the measurement",
                    {"stage": top.name, "measured": round(top.amplification, 3), "fixed": amplification},
                )
            )
            amplification = top.amplification
    row_memory = profile.p90_bytes * amplification * SAFETY_MARGIN
    fired.append(
        Rule(
            "row_memory",
            f"{profile.p90_bytes:,.0f} B x {amplification:g} x {SAFETY_MARGIN:g} (safety) = {row_memory:,.0f} B",
            {"amplification": round(amplification, 3), "safety": SAFETY_MARGIN, "bytes": round(row_memory)},
        )
    )
    weight, rule = R.complexity(profile.modality, [(o.name, o.weight) for o in operators])
    fired.append(rule)
    tier, rule = R.memory_tier(resources.available_bytes)
    fired.append(rule)
    budget, rule = R.skew_cut(tier, profile.skew)
    fired += [rule] if rule else []
    budget, bound_rules = R.bound_bytes(budget, resources.available_bytes)
    fired += bound_rules
    rule = R.row_group_check(*profile.largest_row_group, budget)
    fired += [rule] if rule else []
    if row_memory > 0:
        rows, rule = R.rows_for_budget(budget, row_memory, weight)
    else:
        rows = cfg.default_rows
        rule = Rule("default_rows", f"nothing to sample: {cfg.name} default {rows:,} rows", {"rows": rows})
    fired.append(rule)
    rows, rule = R.cap_modality_rows(rows, profile.modality)
    fired += [rule] if rule else []
    rows, rule = R.min_batches(rows, profile.rows_total, resources.cores)
    fired += [rule] if rule else []
    if profile.seed_estimate_bytes > 0:
        seed_row = profile.seed_estimate_bytes * cfg.memory_multiplier * SAFETY_MARGIN
        seed_rows = min(cfg.max_rows, max(1, int(budget / (seed_row * weight))))
        fired.append(
            Rule(
                "seed_comparison",
                f"with the seed's {profile.seed_estimate_bytes:,.0f} B a row, the same rules would give"
                f" {seed_rows:,} rows (vs {rows:,} from real bytes)",
                {"seed_rows": seed_rows, "rows": rows},
            )
        )
    if fixed_batch_rows is not None and fixed_batch_rows != rows:
        fired.append(
            Rule(
                "fixed_batch_rows",
                f"the recipe sets batch_rows {fixed_batch_rows:,} (plan: {rows:,})",
                {"recipe": fixed_batch_rows, "planned": rows},
            )
        )
        rows = fixed_batch_rows
    batches = R.batch_count(rows, profile.shard_rows)
    worker_count, rule = R.workers(resources.cores, len(profile.shard_rows))
    fired.append(rule)
    in_flight, rule = R.max_in_flight(rows * row_memory * weight, resources.available_bytes, worker_count, batches)
    fired.append(rule)
    replicas, rule = _replicas(stages, operators, measured, worker_count)
    fired.append(rule)
    return BatchPlan(
        modality=cfg.name,
        rows_total=profile.rows_total,
        rows_sampled=profile.rows_sampled,
        p90_bytes=profile.p90_bytes,
        seed_estimate_bytes=profile.seed_estimate_bytes,
        skew=profile.skew,
        tier_mb=tier // R.MB,
        row_memory_bytes=row_memory,
        complexity=weight,
        batch_bytes=budget,
        batch_rows=rows,
        batches=batches,
        workers=worker_count,
        max_in_flight=in_flight,
        replicas=replicas,
        resources=resources,
        rules=fired,
        measured=measured,
        declared_by=profile.declared_by,
    )


def _replicas(
    stages: list[str], operators: list[OperatorCost], measured: list[StageCost], worker_count: int
) -> tuple[dict[str, int], Rule]:
    """Workers shared among stages by measured seconds on the sample, else by operator weights."""
    if measured:
        costs = {c.name: c.seconds for c in measured}
        source = "measured seconds on the sample"
    else:
        costs = {s: sum(o.weight for o in operators if o.stage == s) for s in stages}
        source = "operator weights (mdf plan --measure uses their measured cost)"
    replicas = R.split_replicas(costs, worker_count)
    shares = ", ".join(f"{s} {costs[s]:.3g} -> {n}" for s, n in replicas.items())
    rounded = {s: round(c, 6) for s, c in costs.items()}
    return replicas, Rule("replicas", f"{worker_count} worker(s) by {source}: {shares}", {"costs": rounded})
