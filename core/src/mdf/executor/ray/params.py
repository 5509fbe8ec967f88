"""The Ray executor's own keys of ``executor:`` (validated with their YAML path before any work)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from mdf.executor.api import ExecutorParams

RAY_PIP = 'pip install "mdf-core[ray]"'


def auto_max_in_flight(replicas: list[int], loaders: int) -> int:
    """Every replica of every stage can hold one batch running and one queued, and loaders never starve:
    ``max(2 * sum(replicas), 2 * loaders)``. A byte bound (``max_bytes_in_flight``) caps it further. With
    ``batch_rows: auto`` the batch-size planner's value (bounded by memory per batch) is used instead."""
    return max(2 * sum(replicas), 2 * loaders)


class RayParams(ExecutorParams):
    """Parameters of the Ray executor (``executor: {type: ray, ...}``)."""

    address: str | None = Field(
        None,
        description="cluster to join: HOST:PORT as `ray start` prints it, or auto; none = RAY_ADDRESS or a local Ray",
    )
    max_in_flight: int | Literal["auto"] = Field("auto", description="batch chains alive at once")
    max_bytes_in_flight: int | None = Field(None, gt=0, description="bytes of input batches alive at once")
    loaders: int | Literal["auto"] = Field("auto", description="loader actors (each owns disjoint shards)")
    writers: int | Literal["auto"] = Field("auto", description="writer actors (each owns disjoint shards)")
    max_restarts: int = Field(3, ge=0, description="times a dead actor is restarted")
    max_task_retries: int = Field(3, ge=0, description="times a call on a dead actor is retried")
    placement_timeout_s: float = Field(60.0, gt=0, description="wait this long for replicas to start")
    connect_timeout_s: float = Field(20.0, gt=0, description="give up joining `address` after this long")
    dashboard: bool = Field(False, description="start Ray's dashboard with a local Ray")
    fuse_stages: bool = Field(
        True, description="run consecutive stages with the same resources and replicas in one actor"
    )
    whole_shards: bool | Literal["auto"] = Field(
        "auto",
        description="replicas read, process and write whole shards, no batch chains; auto: when all stages fuse, "
        "there are at least as many shards as replicas and neither max_in_flight nor max_bytes_in_flight is set",
    )

    @field_validator("max_in_flight", "loaders", "writers")
    @classmethod
    def _positive(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 1:
            raise ValueError(f"must be >= 1 or 'auto', got {value}")
        return value
