"""The recipe's schema: what a YAML recipe may say, checked by pydantic (unknown keys refused).

Schema only: names (operators, readers, writers, executors) are resolved through the plugin registry, and each
component's own ``Params`` checked, by :mod:`mdf.resolve`, which also reads recipe files (``load_recipe``,
``parse_recipe``). This module imports no plugin machinery, so the hook specifications can name :class:`Recipe`
without an import circle. Relative paths in a recipe are relative to the working directory.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReplicasSpec(_Spec):
    """How many actors a stage may use: at least ``min`` must be placed, up to ``max`` are created."""

    min: int = Field(1, ge=1)
    max: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _order(self) -> ReplicasSpec:
        if self.max < self.min:
            raise ValueError(f"max ({self.max}) is below min ({self.min}); make max >= min")
        return self


class ResourcesSpec(_Spec):
    """Per-replica resources; ``gpu`` may be fractional (0.5 = two replicas share a GPU)."""

    cpu: float = Field(1.0, ge=0)
    gpu: float = Field(0.0, ge=0)
    memory_mb: int | None = Field(None, gt=0)
    custom: dict[str, float] = Field(default_factory=dict)


class OperatorSpec(_Spec):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: Any) -> Any:
        """Accept ``op_name``, ``{op_name: {params}}`` and ``{op_name: null}``."""
        if isinstance(value, str):
            return {"name": value}
        if isinstance(value, dict) and len(value) == 1 and "name" not in value:
            ((name, params),) = value.items()
            if params is not None and not isinstance(params, dict):
                raise ValueError(f"parameters of '{name}' must be a mapping, got {params!r}")
            return {"name": name, "params": params or {}}
        raise ValueError(f"an operator is written 'name' or 'name: {{param: value}}', got {value!r}")


class StageSpec(_Spec):
    name: str
    operators: list[OperatorSpec] = Field(min_length=1)
    replicas: ReplicasSpec = Field(default_factory=ReplicasSpec)
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)

    @field_validator("replicas", mode="before")
    @classmethod
    def _replicas_int(cls, value: Any) -> Any:
        return {"min": value, "max": value} if isinstance(value, int) else value


class ComponentSpec(BaseModel):
    """``{type: NAME, ...params}`` for a reader or writer; params are checked by the class's own model."""

    model_config = ConfigDict(extra="allow")
    type: str

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class ExecutorSpec(BaseModel):
    """Where to run: the fields every executor understands; the rest belong to the executor (its ``Params``).

    Without ``type`` the run is ``inline`` (this machine, every core), unless an installed executor claims the
    recipe from its own keys or the environment (Ray: ``address`` or ``RAY_ADDRESS``); see
    :func:`mdf.resolve.choose_executor`.
    """

    model_config = ConfigDict(extra="allow")
    type: str | None = Field(None, description="executor name (mdf ops lists them); none = inline unless one is named")
    batch_rows: int | Literal["auto"] = Field(8192, description="rows per batch; auto = the batch-size planner's")
    resume: bool = Field(False, description="skip shards a previous run of this recipe completed (mdf run --resume)")
    _checked: tuple[type, dict[str, Any], Any] | None = PrivateAttr(None)
    """``(executor class, its keys, its validated Params)`` once checked: validated once, when the recipe is
    loaded, and reused by the run (again only if the keys changed since, as a copy with an update does)."""

    @field_validator("batch_rows")
    @classmethod
    def _positive(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 1:
            raise ValueError(f"must be >= 1 or 'auto', got {value}")
        return value

    @property
    def params(self) -> dict[str, Any]:
        """The executor's own keys, for its ``Params`` model."""
        return dict(self.model_extra or {})


class StateSpec(_Spec):
    """The key-state service of deduplicators (:mod:`mdf.state`)."""

    num_buckets: int | Literal["auto"] = Field(
        "auto", description="key-state shards (one Ray actor each); auto = one per 50 M expected keys"
    )
    expected_keys: int | None = Field(None, gt=0, description="keys the dedups will hold; sizes num_buckets: auto")
    snapshot_every_s: float = Field(30.0, ge=0, description="snapshot the key state at most this often")

    @field_validator("num_buckets")
    @classmethod
    def _positive(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 1:
            raise ValueError(f"must be >= 1 or 'auto', got {value}")
        return value


class Recipe(_Spec):
    """A validated recipe. ``source`` is the file it came from (for messages and reports)."""

    reader: ComponentSpec
    stages: list[StageSpec] = Field(min_length=1)
    writer: ComponentSpec
    rejected: ComponentSpec | None = None
    executor: ExecutorSpec = Field(default_factory=ExecutorSpec)
    state: StateSpec = Field(default_factory=StateSpec)
    on_damaged_input: Literal["reject", "fail"] = Field(
        "reject", description="reject: a damaged file is a reader:damaged_input row and the run goes on; fail: exit 1"
    )
    storage: Any = Field(
        None,
        description="object storage: storage.s3 {endpoint_url, region, anonymous, profile, max_attempts, ...}; "
        "default: the AWS credential chain and AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL",
    )
    source: str = ""

    @field_validator("storage", mode="before")
    @classmethod
    def _storage(cls, value: Any) -> Any:
        """Validated by :func:`mdf.storage.parse_storage` (errors name ``storage.<key>``, never a secret's value),
        kept as its settings model: secrets are ``SecretStr``, so ``run.json``, the log and the report show
        ``**********``. Imported here, not at module top: recipes without object storage never load it."""
        if value is None:
            return None
        from mdf.storage.config import parse_storage

        return parse_storage(value, "storage")

    @model_validator(mode="after")
    def _unique_stage_names(self) -> Recipe:
        seen: set[str] = set()
        for i, stage in enumerate(self.stages):
            if stage.name in seen:
                raise ValueError(f"stages[{i}].name '{stage.name}' is used twice; give each stage its own name")
            seen.add(stage.name)
        return self
