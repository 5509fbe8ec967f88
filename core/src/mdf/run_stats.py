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
class ExecutorSection:
    """Figures an executor contributes to the report: a heading, sentences, a table and optional bars.

    Plain data, not HTML: the report escapes and lays it out like its own sections, so a plugin cannot break the
    page (or inject markup into it). A section whose ``id`` is one of the report's own (``bottleneck``) replaces
    that section; any other is added after it."""

    id: str
    title: str
    lines: list[str] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    numeric: tuple[int, ...] = ()  # columns right-aligned and sorted as numbers
    bars: tuple[list[str], list[float], str] | None = None  # (labels, values, axis label): one bar per label
    bars_limit: float | None = None  # the axis' end (100 for percentages); None = the largest value


@dataclass
class ExecutorMetrics(Record):
    """What an executor measured beyond rows. Each executor fills its own subclass (named by its class's
    ``Metrics``, which ``metrics.json`` is read back with); its fields are written at the top level of
    ``metrics.json``.

    The methods are how the figures reach the user: ``mdf run``'s table, the report and the scale-out projection
    call them and name no executor, so a plugin executor's figures show the same way as the built-in ones'. Each
    call is guarded by its caller: a method that raises costs its own lines or section (the table and the page
    say which), never the run."""

    def startup_seconds(self) -> float:
        """Seconds of the wall time spent starting up before rows flowed (actors, a cluster); 0 if none."""
        return 0.0

    def run_lines(self) -> list[str]:
        """Lines under ``mdf run``'s table (rich markup; data text must be escaped by the executor)."""
        return []

    def report_sections(self) -> list[ExecutorSection]:
        """Sections of the report (see :class:`ExecutorSection`)."""
        return []

    def stage_costs(self) -> dict[str, tuple[float, float]]:
        """Per stage name: ``(CPU seconds, busy wall seconds)`` measured by the processes that ran it, for the
        projection: per-row work only, start-up such as a replica's first-batch warm-up left out. Empty: the
        projection splits the process's CPU time by operator time instead."""
        return {}

    def io_cpu_s(self) -> float | None:
        """CPU seconds spent reading and writing, when measured apart from the stages; else None."""
        return None

    def key_buckets_in_parallel(self) -> bool:
        """Whether the key-state buckets served claims at once (actors) rather than in the operator's thread."""
        return False

    def log_dirs(self) -> list[tuple[str, str]]:
        """``(what, path)`` of logs the executor kept besides mdf's own, for ``mdf where``."""
        return []

    def cluster_info(self) -> ClusterInfo | None:
        """The cluster the run ran on beyond the driver's machine (the report's machine line); None if none."""
        return None


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
    ``batch_plan`` is the batch-size planner's choice and rules as ``mdf plan`` prints them (``batch_rows: auto``)."""

    recipe: dict[str, Any] | None = None
    rejected_path: str | None = None
    rejected_format: str | None = None
    machine: Machine | None = None
    batch_rows: int | None = None
    batch_plan: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RunContext:
        out = super().from_dict(d)
        m = d.get("machine")
        out.machine = Machine.from_dict(m) if m else None
        old = d.get("partition")  # a metrics.json written before the planner's "partition" became "batch"
        if out.batch_plan is None and old:
            renamed = {"partitions": "batches", "partition_mb": "batch_mb"}
            out.batch_plan = {renamed.get(k, k): v for k, v in old.items()}
        return out
