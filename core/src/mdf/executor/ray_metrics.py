"""What the Ray executor measures (per-stage utilisation, the bottleneck, chains in flight, start-up) and how it
shows it: the lines under ``mdf run``'s table, the report's bottleneck section, the projection's measured
costs. Core calls these through :class:`mdf.run_stats.ExecutorMetrics` and names no executor."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mdf.run_stats import ExecutorMetrics, ExecutorSection, Record


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

    def startup_seconds(self) -> float:
        return self.startup_s

    def run_lines(self) -> list[str]:
        if not self.stage_stats:
            return []
        from rich.markup import escape  # here: choosing an executor imports this module (rich.markup ~50 ms)

        parts = [f"{escape(s.name)} x{s.replicas} busy {s.utilisation:.0%}" for s in self.stage_stats]
        return [
            f"stages: {'; '.join(parts)}; bottleneck: {escape(self.bottleneck)}; "
            f"in flight: peak {self.peak_in_flight} of {self.max_in_flight}"
        ]

    def report_sections(self) -> list[ExecutorSection]:
        """The bottleneck section from busy time per replica, measured by the actors."""
        if not self.stage_stats:
            return []
        rows: list[list[Any]] = []
        labels: list[str] = []
        values: list[float] = []
        for s in self.stage_stats:
            per = s.replica_utilisation
            rows.append(
                [s.name, s.replicas, len(s.nodes), s.busy_s, s.utilisation * 100, ", ".join(f"{u:.0%}" for u in per)]
            )
            labels += [f"{s.name} #{i}" for i in range(len(per))]
            values += [u * 100 for u in per]
        w = self.writer_stats
        if w is not None:
            rows.append([w.name, w.replicas, "", w.busy_s, w.utilisation * 100, ""])
        intro = (
            f"Bottleneck: {self.bottleneck} (the busiest stage per replica). "
            f"Chains in flight: peak {self.peak_in_flight} of {self.max_in_flight}."
        )
        return [
            ExecutorSection(
                "bottleneck",
                "Bottleneck and utilisation per replica",
                [intro],
                ["stage", "replicas", "nodes", "busy s", "utilisation %", "per replica"],
                rows,
                (1, 2, 3, 4),
                (labels, values, "busy % of wall time"),
                100,
            )
        ]

    def stage_costs(self) -> dict[str, tuple[float, float]]:
        return {s.name: (s.cpu_s, s.busy_s) for s in self.stage_stats}

    def io_cpu_s(self) -> float | None:
        w = self.writer_stats
        return None if w is None else w.cpu_s + w.loader_cpu_s

    def key_buckets_in_parallel(self) -> bool:
        return True  # one actor per bucket

    def log_dirs(self) -> list[tuple[str, str]]:
        return [("Ray's logs", self.ray_logs)] if self.ray_logs else []
