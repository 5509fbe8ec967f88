"""Typed records of a run besides its operator counters: what each executor measured, the cluster-dedup passes,
the resume, the key state, damaged input files and the context the report needs.

Each is a dataclass whose ``to_dict`` gives the keys ``metrics.json`` has always had and whose ``from_dict``
reads them back, so the end-of-run table, ``metrics.json`` and ``mdf report`` read fields, not dict keys: a typo
is an ``AttributeError`` (and a mypy error) rather than a silent ``None``. All of them pickle, which is how a Ray
actor's records reach the driver.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypeVar

R = TypeVar("R", bound="Record")


class Record:
    """``to_dict``/``from_dict`` by field name for flat dataclasses (subclasses with nested records override
    ``from_dict``). Reading ignores keys it does not know (a later mdf of the same metrics version may add some)
    and gives missing ones their defaults (an earlier mdf may not have written them)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]  # every subclass is a dataclass

    @classmethod
    def from_dict(cls: type[R], d: Mapping[str, Any]) -> R:
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class DamagedInput(Record):
    """A damaged input file: where reading it failed and why (the rows before the damage were kept)."""

    file: str | None
    offset: int | None  # byte offset in the (compressed) file; None when the library does not say
    error: str

    def describe(self) -> str:
        at = f" at byte {self.offset:,}" if isinstance(self.offset, int) else ""
        return f"{self.file}{at}: {self.error}"


@dataclass
class ExecutorMetrics(Record):
    """What an executor measured beyond rows. Each executor fills its own subclass; its fields are written at the
    top level of ``metrics.json``. A plugin executor subclasses this (or its parent executor's record) for its
    own figures; ``mdf report`` reads back the fields of the executors core ships (:data:`EXECUTOR_METRICS`)."""


@dataclass
class InlineMetrics(ExecutorMetrics):
    """The inline executor: worker threads, the peak bytes of batches held, when the first batch arrived."""

    workers: int = 1
    first_batch_unix_s: float | None = None  # start-up cost, in benchmarks
    peak_bytes_in_flight: int = 0


@dataclass
class StageStats(Record):
    """A Ray stage's busy time summed over its replicas. Stages fused into one actor report their own busy time
    and the group they ran in (``actor``)."""

    name: str
    actor: str
    replicas: int
    nodes: list[str] = field(default_factory=list)
    busy_s: float = 0.0
    idle_s: float = 0.0
    utilisation: float = 0.0  # busy / (wall * replicas)
    replica_utilisation: list[float] = field(default_factory=list)
    cpu_s: float = 0.0


@dataclass
class WriterStats(Record):
    """Ray's writer actors (and the loaders' CPU time, for the projection's read + write cost)."""

    name: str = "(writers)"
    replicas: int = 0
    busy_s: float = 0.0
    utilisation: float = 0.0
    cpu_s: float = 0.0
    loader_cpu_s: float = 0.0


@dataclass
class RayMetrics(ExecutorMetrics):
    """The Ray executor: per-stage utilisation, the bottleneck, chains in flight, actor start-up, Ray's logs."""

    startup_s: float = 0.0
    stage_stats: list[StageStats] = field(default_factory=list)
    writer_stats: WriterStats | None = None
    bottleneck: str = ""  # the busiest stage per replica, or "(writers)"
    max_in_flight: int = 0
    peak_in_flight: int = 0
    peak_bytes_in_flight: int = 0
    replicas: dict[str, int] = field(default_factory=dict)  # per stage name
    ray_logs: str | None = None  # the session's log folder, when Ray says where

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RayMetrics:
        out = super().from_dict(d)
        out.stage_stats = [StageStats.from_dict(s) for s in d.get("stage_stats") or []]
        w = d.get("writer_stats")
        out.writer_stats = WriterStats.from_dict(w) if w else None
        return out


EXECUTOR_METRICS: dict[str, type[ExecutorMetrics]] = {"inline": InlineMetrics, "ray": RayMetrics}
"""The record class each executor core ships writes (by ``RunMetrics.executor``), for reading ``metrics.json``."""


@dataclass
class PassMetrics(Record):
    """One cluster-dedup collect pass: the operator's key-state namespace, its input, and the clusters closed."""

    collect: str
    rows_read: int = 0
    wall_s: float = 0.0
    edges: int = 0
    rows_in_clusters: int = 0
    clusters: int = 0


@dataclass
class ResumeInfo(Record):
    """What ``--resume`` took from the killed run: the shards it had committed and their rows."""

    skipped_shards: int
    restored_rows_read: int = 0
    this_run_shards: int = 0
    shards: list[str] = field(default_factory=list)


@dataclass
class KeyStateStats(Record):
    """One deduplicator's key state at the end of the run, over all buckets."""

    keys: int = 0
    bytes: int = 0
    buckets: int = 0
    bytes_per_key: float = 0.0
    max_bucket_bytes: int = 0


@dataclass
class ClusterInfo(Record):
    """The Ray cluster's totals, when a Ray run had one up."""

    nodes: int = 0
    cpus: float = 0.0
    gpus: float = 0.0


@dataclass
class Machine(Record):
    """The machine that ran the driver (the cluster's totals in ``cluster`` for Ray runs)."""

    host: str = ""
    os: str = ""
    python: str = ""
    cpus: int = 0
    mdf: str = ""
    memory_gb: float | None = None
    cluster: ClusterInfo | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Machine:
        out = super().from_dict(d)
        c = d.get("cluster")
        out.cluster = ClusterInfo.from_dict(c) if c else None
        return out


@dataclass
class RunContext(Record):
    """What the report needs besides counters, recorded at the end of a run so ``mdf report`` can rebuild the
    page from the metadata alone. ``recipe`` is the recipe as run (after ``--set``), as its YAML would read;
    ``partition`` is the partition planner's choice and rules as ``mdf plan`` prints them (``batch_rows: auto``)."""

    recipe: dict[str, Any] | None = None
    rejected_path: str | None = None
    rejected_format: str | None = None
    machine: Machine | None = None
    batch_rows: int | None = None
    partition: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RunContext:
        out = super().from_dict(d)
        m = d.get("machine")
        out.machine = Machine.from_dict(m) if m else None
        return out
