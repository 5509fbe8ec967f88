"""Per-operator, per-stage and per-run counters, and ``metrics.json``.

Counters are dataclasses of plain numbers and dicts, so metrics from many workers (Ray actors, pickled to the
driver) merge by addition and serialise to ``metrics.json`` without custom encoders. What executors and passes
record besides counters is typed too (:mod:`mdf.run_stats`). ``to_dict`` writes the shape ``metrics.json`` has
always had plus ``"version"``; :meth:`RunMetrics.from_dict` reads it back (the report, ``mdf report``). Reason
counts come from ``pyarrow.compute.value_counts`` on the rejected batch, never from a Python loop over rows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from mdf.errors import MdfError
from mdf.recording import Counted, ShardLog, Timeline, empty_histogram, latency_bucket
from mdf.run_stats import (
    DamagedInput,
    ExecutorMetrics,
    KeyStateStats,
    PassMetrics,
    ResumeInfo,
    RunContext,
)
from mdf.storage.redact import redact_text

METRICS_VERSION = 1
"""``metrics.json``'s ``"version"``: raised when a key changes meaning or goes away (adding keys does not).
Files written before the field existed have version 1's shape."""

REASON = "_reason"
REASON_DETAIL = "_reason_detail"
"""Optional column beside ``_reason`` with the long text behind a short reason class (a decoder's message), so
reasons stay few and countable while the rejected rows keep the full story. Kept rows never carry it."""


@dataclass
class OperatorMetrics:
    """Rows in/out, rejected rows by reason, and time spent for one operator."""

    name: str
    kind: str
    rows_in: int = 0
    rows_out: int = 0
    rows_rejected: int = 0
    batches: int = 0
    time_s: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)
    latency: list[int] = field(default_factory=empty_histogram)  # batches per bin of mdf.recording's edges
    counters: dict[str, int] = field(default_factory=dict)
    """Operator-specific counts beyond rows (e.g. lines a line-cleaning refiner removed, by rule); summed on
    merge like the rest."""
    settings: dict[str, float | int | str] = field(default_factory=dict)
    """Values an operator chose from the data rather than from the recipe (``score_filter``'s threshold for a
    ``top_fraction``), so a user sees what the run actually cut at: the end-of-run table, the report's funnel
    and ``metrics.json`` show them. Not summed: every worker computes the same value, and merge keeps it."""

    def count(self, name: str, n: int) -> None:
        """Add ``n`` to the operator-specific counter ``name``."""
        self.counters[name] = self.counters.get(name, 0) + n

    def note(self, name: str, value: float | int | str) -> None:
        """Record the setting ``name`` the operator chose (see :attr:`settings`)."""
        self.settings[name] = value

    def record(self, rows_in: int, rows_out: int, rejected: pa.RecordBatch | None, seconds: float) -> None:
        self.rows_in += rows_in
        self.rows_out += rows_out
        self.batches += 1
        self.time_s += seconds
        self.latency[latency_bucket(seconds)] += 1
        if rejected is not None and rejected.num_rows:
            self.rows_rejected += rejected.num_rows
            count_reasons(rejected, self.reasons)

    def merge(self, other: OperatorMetrics) -> None:
        self.rows_in += other.rows_in
        self.rows_out += other.rows_out
        self.rows_rejected += other.rows_rejected
        self.batches += other.batches
        self.time_s += other.time_s
        self.latency = [a + b for a, b in zip(self.latency, other.latency, strict=True)]
        for k, v in other.reasons.items():
            self.reasons[k] = self.reasons.get(k, 0) + v
        for k, v in other.counters.items():
            self.count(k, v)
        self.settings.update(other.settings)

    @property
    def pass_rate(self) -> float:
        return self.rows_out / self.rows_in if self.rows_in else 1.0

    @property
    def rows_per_s(self) -> float:
        return self.rows_in / self.time_s if self.time_s > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pass_rate"] = round(self.pass_rate, 6)
        d["rows_per_s"] = round(self.rows_per_s, 1)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> OperatorMetrics:
        """From :meth:`to_dict` (or ``asdict``): the derived ``pass_rate`` and ``rows_per_s`` are dropped."""
        return cls(**{k: v for k, v in d.items() if k in _OP_FIELDS})


_OP_FIELDS = frozenset(f.name for f in fields(OperatorMetrics))


def count_reasons(rejected: pa.RecordBatch, into: dict[str, int]) -> None:
    """Add the counts of each ``_reason`` value of ``rejected`` to ``into``."""
    idx = rejected.schema.get_field_index(REASON)
    if idx < 0:
        into["unknown"] = into.get("unknown", 0) + rejected.num_rows
        return
    for item in pc.value_counts(rejected.column(idx)).to_pylist():
        key = item["values"] if item["values"] is not None else "unknown"
        into[key] = into.get(key, 0) + item["counts"]


@dataclass
class StageMetrics:
    """One recipe stage's operators, in recipe order."""

    name: str
    operators: list[OperatorMetrics] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "operators": [op.to_dict() for op in self.operators]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StageMetrics:
        return cls(d["name"], [OperatorMetrics.from_dict(op) for op in d["operators"]])


@dataclass
class RunMetrics:
    """Whole-run accounting: ``rows_read == rows_written + rows_rejected`` is checked at the end."""

    executor: str
    rows_read: int = 0
    rows_written: int = 0
    rows_rejected: int = 0
    shards: int = 0
    batches: int = 0
    wall_s: float = 0.0
    reader_reasons: dict[str, int] = field(default_factory=dict)
    damaged: list[DamagedInput] = field(default_factory=list)
    stages: list[StageMetrics] = field(default_factory=list)
    executor_metrics: ExecutorMetrics = field(default_factory=ExecutorMetrics)
    passes: list[PassMetrics] = field(default_factory=list)  # cluster-dedup collect passes, in order
    resumed: ResumeInfo | None = None
    key_state: dict[str, KeyStateStats] = field(default_factory=dict)  # per deduplicator namespace
    key_state_snapshots: int = 0
    context: RunContext = field(default_factory=RunContext)
    timeline: Timeline = field(default_factory=Timeline)
    shard_log: ShardLog = field(default_factory=ShardLog)
    report: Path | None = None  # the HTML report, once written (not in metrics.json, which comes first)
    report_error: str | None = None  # why the report could not be written (not in metrics.json)

    def observe(
        self, shard: str, kept: int, rejected: int, reader_rejected: int, stages: Sequence[Sequence[Counted]]
    ) -> None:
        """Record one finished batch for the report: its shard's rows and, from the cumulative per-operator
        counters ``stages`` (recipe order), what each operator did since the previous batch."""
        self.shard_log.observe(shard, kept, rejected, reader_rejected, self.timeline.last_observed)
        self.timeline.observe([op for ops in stages for op in ops], self.rows_written + self.rows_rejected)

    @property
    def balanced(self) -> bool:
        return self.rows_read == self.rows_written + self.rows_rejected

    @property
    def rows_per_s(self) -> float:
        return self.rows_read / self.wall_s if self.wall_s > 0 else 0.0

    def operators(self) -> list[OperatorMetrics]:
        return [op for stage in self.stages for op in stage.operators]

    def to_dict(self) -> dict[str, Any]:
        wall_s = round(self.wall_s, 4)  # the rate is the written time's, so the file reads back to itself
        return {
            "version": METRICS_VERSION,
            "executor": self.executor,
            "rows_read": self.rows_read,
            "rows_written": self.rows_written,
            "rows_rejected": self.rows_rejected,
            "balanced": self.balanced,
            "shards": self.shards,
            "batches": self.batches,
            "wall_s": wall_s,
            "rows_per_s": round(self.rows_read / wall_s, 1) if wall_s > 0 else 0.0,
            "reader_reasons": self.reader_reasons,
            "damaged_inputs": [d.to_dict() for d in self.damaged],
            "stages": [s.to_dict() for s in self.stages],
            "timeline": self.timeline.to_dict(),
            "shard_log": self.shard_log.to_dict(),
            **self.executor_metrics.to_dict(),
            "executor_metrics_type": _type_ref(type(self.executor_metrics)),
            "passes": [p.to_dict() for p in self.passes],
            "resumed": self.resumed.to_dict() if self.resumed is not None else None,
            "key_state": {ns: k.to_dict() for ns, k in self.key_state.items()},
            "key_state_snapshots": self.key_state_snapshots,
            **self.context.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], executor_type: type[ExecutorMetrics] | None = None) -> RunMetrics:
        """Read :meth:`to_dict`'s output (a run's ``metrics.json``) back; ``balanced`` and the rates are derived
        again from the counts. The executor's own figures are read with the record class the file names
        (:func:`executor_metrics_type`) unless ``executor_type`` is given. A file of another version is refused
        with the way out."""
        version = d.get("version", 1)
        if version != METRICS_VERSION:
            raise MdfError(
                f"metrics.json version {version!r}: this mdf reads version {METRICS_VERSION}; "
                "read it with the mdf that wrote it (its version is under machine.mdf)"
            )
        executor = str(d["executor"])
        resumed = d.get("resumed")
        return cls(
            executor=executor,
            **{k: d.get(k, 0) for k in ("rows_read", "rows_written", "rows_rejected", "shards", "batches")},
            wall_s=float(d.get("wall_s", 0.0)),
            reader_reasons=dict(d.get("reader_reasons") or {}),
            damaged=[DamagedInput.from_dict(x) for x in d.get("damaged_inputs") or []],
            stages=[StageMetrics.from_dict(s) for s in d.get("stages") or []],
            executor_metrics=(executor_type or executor_metrics_type(d)).from_dict(d),
            passes=[PassMetrics.from_dict(p) for p in d.get("passes") or []],
            resumed=ResumeInfo.from_dict(resumed) if resumed else None,
            key_state={ns: KeyStateStats.from_dict(k) for ns, k in (d.get("key_state") or {}).items()},
            key_state_snapshots=int(d.get("key_state_snapshots") or 0),
            context=RunContext.from_dict(d),
            timeline=Timeline.from_dict(d.get("timeline") or {}),
            shard_log=ShardLog.from_dict(d.get("shard_log") or {}),
        )

    def write_json(self, path: str | os.PathLike[str]) -> Path:
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".json.tmp")
        tmp.write_text(redact_text(json.dumps(self.to_dict(), indent=2)))  # no URL's credentials (recipe, errors)
        os.replace(tmp, out)
        return out

    @classmethod
    def read_json(cls, path: str | os.PathLike[str]) -> RunMetrics:
        return cls.from_dict(json.loads(Path(path).read_text()))


def executor_metrics_type(d: Mapping[str, Any]) -> type[ExecutorMetrics]:
    """The record class the run's executor wrote, named in ``metrics.json`` (``executor_metrics_type``,
    ``module:Class``); the base record when the file does not say, or the class is not importable here (``mdf
    report`` of another machine's run still draws every core section).

    Only a module of an installed mdf plugin (a package named by an ``mdf`` entry point) is imported, so a
    metrics file cannot make ``mdf report`` import arbitrary code; and not the plugin manager (loading every
    plugin imports pyarrow.dataset and more, for one class)."""
    import importlib

    from mdf.entry_group import mdf_entry_points

    ref = str(d.get("executor_metrics_type") or "")
    module, _, qualname = ref.partition(":")
    packages = {ep.value.split(":")[0].split(".")[0] for ep in mdf_entry_points()}  # the plugin manager's scan
    if not qualname or module.split(".")[0] not in packages:
        return ExecutorMetrics
    try:
        out: Any = importlib.import_module(module)
        for part in qualname.split("."):
            out = getattr(out, part)
    except Exception:  # a plugin that changed or broke costs its own figures only
        return ExecutorMetrics
    return out if isinstance(out, type) and issubclass(out, ExecutorMetrics) else ExecutorMetrics


def _type_ref(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"
