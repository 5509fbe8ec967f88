"""Scale-out projection: what a recipe would do on a cluster, from one run's measured costs.

The seed design printed a table of throughput per cluster size (``Theoretical Scalability``) by multiplying
one 8-CPU figure. mdf projects from what the run measured instead, and names the bound at each size:

* **CPU**: every input row costs ``cpu_s_per_row`` CPU-seconds in all, summed over the run's processes
  (process CPU time, so native rayon threads and Ray's object transfers count): stage replicas, loaders,
  writers and the driver. CPU work is taken as fungible: with enough replicas allowed, the stages share the
  cluster's CPUs in proportion to their cost, so ``rows/s = cpus / cpu_s_per_row``.
* **GPU**: a GPU stage costs its busy seconds per row times the GPU fraction a replica holds.
* **driver submission rate**: one driver submits every batch chain; its CPU seconds per batch bound the rate
  at ``batch_rows / s_per_batch``.
* **key-state buckets**: a bucket serves claims at the rate the deduplicators measured (keys claimed per
  second of their busy time, which includes hashing, so it is a lower bound on a bucket's rate), and the
  state gets one bucket per 50 M expected keys, at most one per CPU (``num_buckets: auto``).

The throughput is the smallest bound. Startup (a Ray replica's first-batch warm-up included: measured and taken
out of its stage's CPU), stragglers and the network are not in it; the 2-node test in
``tests/test_projection_multinode.py`` checks the model against a real two-raylet run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from mdf.metrics import RunMetrics
from mdf.state.service import KEYS_PER_BUCKET, auto_buckets

CLUSTER_CPUS = (8, 64, 512, 4096)
RECORDS = (1_000_000_000, 100_000_000_000)
CPUS_PER_GPU = 8  # the seed's cluster shapes: 8 CPU + 1 GPU ... 512 CPU + 64 GPU
# An inline run has no driver: per batch chain a Ray driver spent about this much CPU on the 2-core
# development machine (examples/text.yaml, 1,000-row batches, loaded machine).
ASSUMED_DRIVER_S_PER_BATCH = 0.008


@dataclass
class StageCost:
    name: str
    cpu_s_per_row: float  # CPU-seconds per *input* row of the run (a stage after a filter sees fewer)
    gpu_s_per_row: float = 0.0
    gpu: float = 0.0


@dataclass
class Measured:
    """Per-input-row costs of one run, the figures the projection scales."""

    source: str
    rows: int
    batch_rows: int
    stages: list[StageCost]
    io_cpu_s_per_row: float  # reading and writing (loaders, writers; inline: everything outside operators)
    driver_s_per_batch: float
    driver_measured: bool
    claims_per_row: float = 0.0  # key-state claims per input row
    keys_per_row: float = 0.0  # keys kept per input row
    claims_per_bucket_s: float = 0.0
    fixed_buckets: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def cpu_s_per_row(self) -> float:
        return sum(s.cpu_s_per_row for s in self.stages) + self.io_cpu_s_per_row

    @classmethod
    def from_metrics(cls, m: RunMetrics) -> Measured:
        """From a run's metrics (``metrics.json`` read back with :meth:`RunMetrics.from_dict`; either executor)."""
        rows = max(1, m.rows_read)
        recipe = m.context.recipe or {}  # the recipe as run, as its YAML reads: resources per stage
        specs = {s["name"]: s for s in recipe.get("stages", [])}
        batches = max(1, m.batches)
        batch_rows = int(m.context.batch_rows or math.ceil(rows / batches))
        process_cpu = m.timeline.cpu_s
        busy = {s.name: sum(op.time_s for op in s.operators) for s in m.stages}
        stats = _guarded(m.executor_metrics.stage_costs, {})  # (cpu s, busy s) per stage, where measured
        io_measured = _guarded(m.executor_metrics.io_cpu_s, None)
        stages, notes = [], []
        for name, busy_s in busy.items():
            gpu = float((specs.get(name) or {}).get("resources", {}).get("gpu", 0.0))
            cpu_s, wall = stats.get(name, (busy_s, busy_s))
            stages.append(StageCost(name, cpu_s / rows, wall * gpu / rows if gpu else 0.0, gpu))
        if io_measured is not None:
            io = io_measured / rows
            driver, measured = process_cpu / batches, True
            source = f"{m.executor} run: CPU time of every stage, of reading and writing, and of the driver"
        else:
            op_total = sum(busy.values())
            io = max(0.0, process_cpu - op_total) / rows
            if op_total > process_cpu > 0:  # waits for a busy CPU count in operator wall time, not in CPU time
                for st in stages:
                    st.cpu_s_per_row *= process_cpu / op_total
                notes.append("operator wall time exceeded the process's CPU time (a loaded machine): stage costs "
                             "scaled down to the CPU time, reading and writing not separable")  # fmt: skip
            driver, measured = ASSUMED_DRIVER_S_PER_BATCH, False
            source = f"{m.executor} run: the process's CPU time, split over stages by their operators' time"
            notes.append(f"driver cost per batch not measured ({m.executor} run): assumed {driver * 1e3:g} ms")
        out = cls(source, rows, batch_rows, stages, io, driver, measured, notes=notes)
        out._key_state(m, recipe)
        return out

    def _key_state(self, m: RunMetrics, recipe: dict[str, Any]) -> None:
        ks = m.key_state
        if not ks:
            return
        keys = sum(v.keys for v in ks.values())
        dedup_ops = [op for op in m.operators() if op.kind == "deduplicator"]
        kept = sum(op.rows_out for op in dedup_ops)
        claims = sum(op.rows_in for op in dedup_ops) * (keys / kept if kept else 1.0)
        seconds = sum(op.time_s for op in dedup_ops)
        self.keys_per_row = keys / self.rows
        self.claims_per_row = claims / self.rows
        # in one process the buckets are served one after another in the operator's thread; as actors (Ray)
        # they run in parallel, so the operators' rate is shared by every bucket
        parallel = (
            max(v.buckets for v in ks.values()) if _guarded(m.executor_metrics.key_buckets_in_parallel, False) else 1
        )
        self.claims_per_bucket_s = claims / seconds / parallel if seconds > 0 else 0.0
        nb = (recipe.get("state") or {}).get("num_buckets", "auto")
        self.fixed_buckets = nb if isinstance(nb, int) else None

    @classmethod
    def from_stage_costs(cls, costs: list[Any], batch_rows: int) -> Measured:
        """From ``mdf plan --measure``'s stage timings on a sample (no run yet: readers and writers unknown)."""
        stages = [StageCost(c.name, c.seconds_per_row * c.rows_in / max(1, costs[0].rows_in)) for c in costs]
        rows = costs[0].rows_in if costs else 0
        note = "no run yet: stage costs timed on a sample, reading and writing not counted (run it once)"
        return cls(
            "sample (mdf plan --measure)",
            rows,
            batch_rows,
            stages,
            0.0,
            ASSUMED_DRIVER_S_PER_BATCH,
            False,
            notes=[note],
        )


@dataclass
class Projection:
    cpus: int
    gpus: int
    rows_per_s: float
    bound: str
    bounds: dict[str, float]
    buckets: int

    def seconds(self, records: int) -> float:
        return records / self.rows_per_s if self.rows_per_s > 0 else math.inf


def project(m: Measured, cpus: int, gpus: int = 0, records: int = RECORDS[0]) -> Projection:
    """Throughput on ``cpus`` CPUs and ``gpus`` GPUs for ``records`` input rows, and the bound that sets it."""
    bounds: dict[str, float] = {}
    if m.cpu_s_per_row > 0:
        heaviest = max([*m.stages, StageCost("read+write", m.io_cpu_s_per_row)], key=lambda s: s.cpu_s_per_row)
        bounds[f"CPU ({heaviest.name}: {heaviest.cpu_s_per_row / m.cpu_s_per_row:.0%} of CPU time)"] = (
            cpus / m.cpu_s_per_row
        )
    gpu_s = sum(s.gpu_s_per_row for s in m.stages)
    if gpu_s > 0:
        name = max(m.stages, key=lambda s: s.gpu_s_per_row).name
        bounds[f"GPU stage {name}"] = gpus / gpu_s if gpus else 0.0
    if m.driver_s_per_batch > 0:
        bounds[f"driver submission rate ({m.batch_rows:,}-row batches)"] = m.batch_rows / m.driver_s_per_batch
    buckets = 0
    if m.claims_per_row > 0 and m.claims_per_bucket_s > 0:
        buckets = m.fixed_buckets or auto_buckets(math.ceil(records * m.keys_per_row), cpus)
        bounds[f"key-state buckets ({buckets})"] = buckets * m.claims_per_bucket_s / m.claims_per_row
    bound = min(bounds, key=lambda k: bounds[k]) if bounds else "nothing measured"
    return Projection(cpus, gpus, bounds.get(bound, 0.0), bound, bounds, buckets)


def needs_gpu(m: Measured) -> bool:
    return any(s.gpu > 0 for s in m.stages)


def cluster_table(m: Measured, sizes: tuple[int, ...] = CLUSTER_CPUS) -> list[dict[str, Any]]:
    """One row per cluster size: CPUs, GPUs, rows/s, the bound, the time for each of ``RECORDS``."""
    rows = []
    for cpus in sizes:
        gpus = max(1, cpus // CPUS_PER_GPU) if needs_gpu(m) else 0
        p = {n: project(m, cpus, gpus, n) for n in RECORDS}
        first = p[RECORDS[0]]
        rows.append(
            {
                "cpus": cpus,
                "gpus": gpus,
                "rows_per_s": first.rows_per_s,
                "bound": first.bound,
                **{f"seconds_{n}": p[n].seconds(n) for n in RECORDS},
                "bound_100b": p[RECORDS[1]].bound,
            }
        )
    return rows


def assumptions(m: Measured) -> list[str]:
    """What the projection takes for granted, in words, with the measured figures it uses."""
    out = [
        f"measured on {m.rows:,} rows ({m.source}); {m.cpu_s_per_row * 1e6:,.1f} CPU-us per input row in all, "
        f"{m.io_cpu_s_per_row * 1e6:,.1f} of it reading and writing",
        "CPU work is shared by all CPUs in proportion to each stage's cost (replicas max allows it); no network, "
        "startup or straggler time",
        f"driver: {m.driver_s_per_batch * 1e3:.2f} ms CPU per batch chain of {m.batch_rows:,} rows "
        f"({'measured' if m.driver_measured else 'assumed'})",
    ]
    if needs_gpu(m):
        out.append(f"one GPU per {CPUS_PER_GPU} CPUs (the seed's cluster shapes); GPU cost = busy time x GPU share")
    if m.claims_per_row:
        out.append(
            f"key state: {m.keys_per_row:.2f} keys kept and {m.claims_per_row:.2f} claims per row; a bucket serves "
            f"{m.claims_per_bucket_s:,.0f} claims/s (measured, an underestimate); one bucket per "
            f"{KEYS_PER_BUCKET / 1e6:,.0f} M keys, at most one per CPU"
        )
    return out + m.notes


def human_seconds(s: float) -> str:
    if not math.isfinite(s):
        return "never"
    for unit, n in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("min", 60)):
        if s >= n * (1 if unit == "min" else 1.5):
            return f"{s / n:,.1f} {unit}"
    return f"{s:,.1f} s"


# The seed design's "Theoretical Scalability" tables (seeds/002), as (CPUs, GPUs, rows/s) rows: projected by the
# seed from one 8-CPU run (text) and a 1,000-image run (image), shown beside mdf's projection for comparison.
SEED_TABLES: dict[str, dict[str, Any]] = {
    "text": {
        "title": "seed: CommonCrawl -> URLFilter -> TextLengthFilter",
        "rows": [(8, 0, 20_000), (64, 0, 160_000), (512, 0, 1_300_000), (4096, 0, 10_000_000)],
    },
    "image": {
        "title": "seed: LAION -> quality -> dedup (no embedding)",
        "rows": [(8, 0, 1_600), (64, 0, 13_000), (512, 0, 104_000), (4096, 0, 832_000)],
    },
    "image_gpu": {
        "title": "seed: LAION -> quality -> dedup -> CLIP embedding (GPU-bound)",
        "rows": [(8, 1, 132), (32, 4, 528), (128, 16, 2_100), (512, 64, 8_400)],
    },
}
TEXT_OPS = {"url_filter", "text_length_filter", "exact_dedup", "minhash_dedup"}


def seed_table(operators: list[str]) -> dict[str, Any] | None:
    """The seed's table for a recipe of the same kind: text filters, image quality/dedup, or with embeddings."""
    names = set(operators)
    if names & {"url_filter", "text_length_filter"} and names <= TEXT_OPS:
        return SEED_TABLES["text"]
    if any(n.startswith("image_") for n in names):
        return SEED_TABLES["image_gpu" if any("embedding" in n for n in names) else "image"]
    return None


def _guarded(method: Any, default: Any) -> Any:
    """An executor's figure for the projection, or ``default`` when its method fails (a figure, not the page)."""
    try:
        return method()
    except Exception:
        return default
