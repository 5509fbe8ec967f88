"""YAML recipe -> validated :class:`Recipe`, failing before any work with the YAML path, the value and the fix.

Validation is two-level: pydantic checks the recipe's own shape (unknown keys refused), then each reader,
operator and writer's ``Params`` model checks its parameters, with its errors re-rooted under the recipe path
(``stages[1].operators[0].min_length``). Relative paths in a recipe are relative to the working directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from mdf.errors import MissingDependencyError, RecipeError
from mdf.overrides import apply_overrides
from mdf.plugins import Plugins, load_plugins
from mdf.validation import format_validation_error


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

    Without ``type`` the run is ``inline`` (this machine, every core), unless the recipe gives ``address`` or
    ``RAY_ADDRESS`` is set, which mean a Ray cluster (see :meth:`choice`).
    """

    model_config = ConfigDict(extra="allow")
    type: str | None = Field(None, description="executor name (mdf ops lists them); none = inline unless Ray is named")
    batch_rows: int | Literal["auto"] = Field(8192, description="rows per batch; auto = the partition planner's")
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

    def choice(self) -> tuple[str, str]:
        """``(executor name, why)``: the recipe's ``type``; else Ray when ``address`` or ``RAY_ADDRESS`` names a
        cluster; else inline."""
        if self.type:
            return self.type, f"executor.type is {self.type!r} in the recipe"
        if self.params.get("address"):
            return "ray", f"the recipe gives executor.address {self.params['address']!r}"
        env = os.environ.get("RAY_ADDRESS")
        if env:
            return "ray", f"RAY_ADDRESS={env} is set"
        return "inline", "nothing names Ray (no executor.type, executor.address or RAY_ADDRESS)"


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
    source: str = ""

    @model_validator(mode="after")
    def _unique_stage_names(self) -> Recipe:
        seen: set[str] = set()
        for i, stage in enumerate(self.stages):
            if stage.name in seen:
                raise ValueError(f"stages[{i}].name '{stage.name}' is used twice; give each stage its own name")
            seen.add(stage.name)
        return self


def load_recipe(path: str | Path, overrides: list[str] | None = None, plugins: Plugins | None = None) -> Recipe:
    """Read, override, validate and resolve a recipe file. Raises :class:`RecipeError` on any problem."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except FileNotFoundError:
        raise RecipeError(f"recipe file {str(p)!r} not found; check the path") from None
    except yaml.YAMLError as exc:
        raise RecipeError(f"{p} is not valid YAML: {exc}") from None
    return parse_recipe(data, overrides, plugins, source=str(p))


def parse_recipe(
    data: Any, overrides: list[str] | None = None, plugins: Plugins | None = None, source: str = "<recipe>"
) -> Recipe:
    if not isinstance(data, dict):
        raise RecipeError(f"{source}: a recipe is a mapping with reader, stages and writer; got {type(data).__name__}")
    data = apply_overrides(data, overrides or [])
    try:
        recipe = Recipe.model_validate({**data, "source": source})
    except ValidationError as exc:
        raise format_validation_error(exc, root="", model=Recipe) from None
    check_components(recipe, plugins or load_plugins())
    (plugins or load_plugins()).manager.hook.mdf_recipe_loaded(recipe=recipe)
    return recipe


def check_components(recipe: Recipe, plugins: Plugins) -> None:
    """Resolve every type/operator name and validate its parameters by constructing it (cheap: no setup())."""
    build_component(plugins.readers, recipe.reader, "reader")
    check_executor(recipe.executor, plugins)
    build_component(plugins.writers, recipe.writer, "writer", dry_run=True)
    if recipe.rejected is not None:
        build_component(plugins.writers, recipe.rejected, "rejected", dry_run=True)
    for i, stage in enumerate(recipe.stages):
        for j, op in enumerate(stage.operators):
            build_operator(plugins, op, f"stages[{i}].operators[{j}]")


def check_executor(spec: ExecutorSpec, plugins: Plugins) -> Any:
    """Resolve the executor and validate its own parameters (``executor.<key>`` in errors) with its ``Params``
    model; return them. Validated once per recipe: the run reuses what loading the recipe checked."""
    name, _ = spec.choice()
    cls = plugins.executors.get(name, "executor.type")
    keys = spec.params
    done = spec._checked
    if done is not None and done[0] is cls and done[1] == keys:
        return done[2]
    try:
        cls.check_requirements()
        params = cls.Params(**keys)
        spec._checked = (cls, keys, params)
        return params
    except ValidationError as exc:
        raise format_validation_error(exc, root="executor", model=cls.Params) from None
    except MissingDependencyError as exc:
        raise RecipeError(str(exc), "executor.type") from None


def build_operator(plugins: Plugins, spec: OperatorSpec, path: str) -> Any:
    cls = plugins.operators.get(spec.name, path)
    return _construct(cls, spec.params, path)


def build_component(registry: Any, spec: ComponentSpec, path: str, dry_run: bool = False) -> Any:
    """Construct a reader/writer. ``dry_run`` only validates params (writers create folders when built)."""
    cls = registry.get(spec.type, f"{path}.type")
    if dry_run:
        try:
            cls.check_requirements()
            return cls.Params(**spec.params)
        except ValidationError as exc:
            raise format_validation_error(exc, root=path, model=cls.Params) from None
        except MissingDependencyError as exc:
            raise RecipeError(str(exc), path) from None
    return _construct(cls, spec.params, path)


def _construct(cls: type, params: dict[str, Any], path: str) -> Any:
    try:
        return cls(**params)
    except ValidationError as exc:
        raise format_validation_error(exc, root=path, model=cls.Params) from None
    except MissingDependencyError as exc:
        raise RecipeError(str(exc), path) from None
