"""Names -> classes: a recipe's reader, writers, operators and executor resolved through the plugin registry,
each constructed or checked with its own ``Params`` model, errors re-rooted under the recipe path
(``stages[1].operators[0].min_length``), before any work. Also reads recipe files: YAML -> overrides ->
:class:`~mdf.recipe.Recipe` (the schema) -> resolved names -> the ``mdf_recipe_loaded`` hook.

It sits above the schema (:mod:`mdf.recipe`) and the plugin manager, so the schema needs neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mdf.errors import MissingDependencyError, RecipeError
from mdf.output_paths import check_stores
from mdf.overrides import apply_overrides, check_integers
from mdf.plugin_set import Plugins
from mdf.plugins import load_plugins
from mdf.recipe import ComponentSpec, ExecutorSpec, OperatorSpec, Recipe
from mdf.validation import format_validation_error

DEFAULT_EXECUTOR = "inline"
"""The executor of a recipe that names none and that no installed executor claims."""


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
    check_integers(data)
    try:
        recipe = Recipe.model_validate({**data, "source": source})
    except ValidationError as exc:
        raise format_validation_error(exc, root="", model=Recipe) from None
    configure_storage(recipe)
    check_components(recipe, plugins or load_plugins())
    check_stores(recipe, plugins or load_plugins())  # a dedup index apart from the inputs and outputs
    (plugins or load_plugins()).manager.hook.mdf_recipe_loaded(recipe=recipe)
    return recipe


def configure_storage(recipe: Recipe) -> None:
    """Make the recipe's ``storage:`` block this process's object-storage settings (:func:`mdf.storage.configure`).

    Called where a recipe is parsed and again in every Ray actor that reads or writes (their recipe travels with
    them, pickled): settings made in the driver do not reach another process."""
    if recipe.storage is not None:
        from mdf.storage import configure

        configure(recipe.storage)


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


def choose_executor(spec: ExecutorSpec, plugins: Plugins) -> tuple[str, str]:
    """``(executor name, why)``: the recipe's ``type``; else the first installed executor (by name) that claims
    the recipe from its own keys or the environment (:meth:`mdf.executor.api.Executor.claims`: Ray does for
    ``address`` or ``RAY_ADDRESS``); else ``inline``."""
    if spec.type:
        return spec.type, f"executor.type is {spec.type!r} in the recipe"
    for name in sorted(plugins.executors.names()):
        if name == DEFAULT_EXECUTOR:
            continue
        why = plugins.executors.get(name, "executor.type").claims(spec.params)
        if why:
            return name, why
    return DEFAULT_EXECUTOR, "no executor.type, and no installed executor is named by the recipe or the environment"


def check_executor(spec: ExecutorSpec, plugins: Plugins) -> Any:
    """Resolve the executor and validate its own parameters (``executor.<key>`` in errors) with its ``Params``
    model; return them. Validated once per recipe: the run reuses what loading the recipe checked."""
    name, _ = choose_executor(spec, plugins)
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
