"""What the Ray executor measures (per-stage utilisation, the bottleneck, chains in flight, start-up) and how it
shows it: the lines under ``mdf run``'s table, the report's bottleneck section, the projection's measured
costs. Core calls these through :class:`mdf.run_stats.ExecutorMetrics` and names no executor."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mdf.run_stats import ClusterInfo, ExecutorMetrics, ExecutorSection, Record

if TYPE_CHECKING:
    from mdf.executor.ray.placement import Pipeline


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
    warmup_cpu_s: float = 0.0  # of cpu_s: the replicas' first batches beyond their steady cost (start-up)


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
    whole_shards: bool = False  # replicas read, process and write whole shards (``in flight`` counts shards)
    replicas_lost: int = 0  # whole-shard replicas whose process or node died; their shards ran again elsewhere
    cluster: ClusterInfo | None = None  # the cluster's totals, read while connected (machine.cluster in the file)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        del out["cluster"]  # metrics.json keeps it where the report reads it: machine.cluster
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RayMetrics:
        out = super().from_dict(d)
        out.stage_stats = [StageStats.from_dict(s) for s in d.get("stage_stats") or []]
        w = d.get("writer_stats")
        out.writer_stats = WriterStats.from_dict(w) if w else None
        c = (d.get("machine") or {}).get("cluster")
        out.cluster = ClusterInfo.from_dict(c) if c else None
        return out

    def cluster_info(self) -> ClusterInfo | None:
        return self.cluster

    def startup_seconds(self) -> float:
        return self.startup_s

    def run_lines(self) -> list[str]:
        if not self.stage_stats:
            return []
        from rich.markup import escape  # here: choosing an executor imports this module (rich.markup ~50 ms)

        parts = [f"{escape(s.name)} x{s.replicas} busy {s.utilisation:.0%}" for s in self.stage_stats]
        return [
            f"stages: {'; '.join(parts)}; bottleneck: {escape(self.bottleneck)}; "
            f"{self._unit()} in flight: peak {self.peak_in_flight} of {self.max_in_flight}"
            + (f"; {self.replicas_lost} replica(s) lost, their shards run again" if self.replicas_lost else "")
        ]

    def _unit(self) -> str:
        return "shards" if self.whole_shards else "chains"

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
            f"{self._unit().capitalize()} in flight: peak {self.peak_in_flight} of {self.max_in_flight}."
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
        """Each stage's CPU less its replicas' first-batch warm-up (:func:`mdf.executor.ray.actors.warm_up_cpu_s`)."""
        return {s.name: (s.cpu_s - s.warmup_cpu_s, s.busy_s) for s in self.stage_stats}

    def io_cpu_s(self) -> float | None:
        w = self.writer_stats
        return None if w is None else w.cpu_s + w.loader_cpu_s

    def key_buckets_in_parallel(self) -> bool:
        return True  # one actor per bucket

    def log_dirs(self) -> list[tuple[str, str]]:
        return [("Ray's logs", self.ray_logs)] if self.ray_logs else []


def stage_stats(names: list[str], members: list[int], stats: list[dict[str, Any]], wall_s: float) -> list[StageStats]:
    """One fused group's stages from its replicas' ``stats()``: each stage's own busy time, and the group's CPU
    split between its stages by their share of each replica's busy time."""
    out = []
    for j, i in enumerate(members):
        busy = sum(s["stage_busy_s"][j] for s in stats)
        share = [s["stage_busy_s"][j] / s["busy_s"] if s["busy_s"] else 1 / len(members) for s in stats]
        out.append(
            StageStats(
                name=names[i],
                actor="+".join(names[m] for m in members),
                replicas=len(stats),
                nodes=sorted({s["node_id"] for s in stats}),
                busy_s=round(busy, 4),
                idle_s=round(max(0.0, wall_s * len(stats) - busy), 4),
                utilisation=round(busy / (wall_s * len(stats)), 4) if wall_s > 0 and stats else 0.0,
                replica_utilisation=[round(s["stage_busy_s"][j] / wall_s, 4) if wall_s > 0 else 0.0 for s in stats],
                cpu_s=round(sum(s["cpu_s"] * f for s, f in zip(stats, share, strict=True)), 4),
                warmup_cpu_s=round(sum(s["warmup_cpu_s"] * f for s, f in zip(stats, share, strict=True)), 4),
            )
        )
    return out


def writer_stats(wstats: list[dict[str, Any]], lstats: list[dict[str, Any]], wall_s: float) -> WriterStats:
    """The writers' busy and CPU time; a whole-shard replica reports its writing as ``write_busy_s`` and
    ``write_cpu_s`` beside its stages' figures (one process does both)."""
    busy = sum(w.get("write_busy_s", w["busy_s"]) for w in wstats)
    return WriterStats(
        replicas=len(wstats),
        busy_s=round(busy, 4),
        utilisation=round(busy / (wall_s * len(wstats)), 4) if wall_s > 0 and wstats else 0.0,
        cpu_s=round(sum(w.get("write_cpu_s", w["cpu_s"]) for w in wstats), 4),
        loader_cpu_s=round(sum(x["cpu_s"] for x in lstats), 4),
    )


def alive_stats(actors: list[Any]) -> list[dict[str, Any]]:
    """``stats()`` of each actor still alive. A replica can die after its last batch or shard was counted (a node
    lost as the run ends): its work is in the run's counts, and only its busy time is missing here, which must
    not fail a run whose data is complete (seen: a whole-shard replica killed idle at the end failed the run)."""
    import ray
    from ray.exceptions import RayActorError

    refs = [a.stats.remote() for a in actors]
    out = []
    for ref in refs:
        try:
            out.append(ray.get(ref))
        except RayActorError:
            continue
    return out


def collect(pipe: Pipeline, peak_in_flight: int, peak_bytes_in_flight: int, wall_s: float) -> RayMetrics:
    """Busy/idle per stage (summed over its replicas) and the bottleneck: the busiest stage per replica."""
    names = [s.name for s in pipe.plan.recipe.stages]
    stages = [
        s
        for members, group in zip(pipe.groups, pipe.stages, strict=True)
        for s in stage_stats(names, members, alive_stats(group), wall_s)
    ]
    writers = writer_stats(alive_stats(pipe.writers), alive_stats(pipe.loaders), wall_s)
    # the writers (Parquet encode, compression) can be the slowest step of a filter-only pipeline
    candidates: list[StageStats | WriterStats] = [*stages, writers]
    return RayMetrics(
        startup_s=round(pipe.startup_s, 3),
        stage_stats=stages,
        writer_stats=writers,
        bottleneck=max(candidates, key=lambda s: s.utilisation).name,
        max_in_flight=pipe.max_in_flight,
        peak_in_flight=peak_in_flight,
        peak_bytes_in_flight=peak_bytes_in_flight,
        replicas={names[i]: n for g, n in zip(pipe.groups, pipe.replicas, strict=True) for i in g},
        whole_shards=pipe.whole_shards,
        replicas_lost=len(pipe.lost),
    )
