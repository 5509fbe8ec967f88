"""Turn pydantic errors into one-line :class:`RecipeError` messages: YAML path, value, fix."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from mdf.errors import RecipeError


def loc_to_path(root: str, loc: tuple[Any, ...]) -> str:
    path = root
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def format_validation_error(exc: ValidationError, root: str, model: type[BaseModel] | None = None) -> RecipeError:
    """Build a RecipeError from the first error (and say how many more there are).

    :param model: the model that was validated, used to list the allowed keys after an unknown one.
    """
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = _user_loc(first["loc"])
    path = loc_to_path(root, loc)
    kind = first["type"]
    value = first.get("input")
    if kind == "extra_forbidden":
        allowed = _fields_at(model, loc[:-1]) if model else []
        msg = f"unknown key '{loc[-1]}'" + (f"; allowed: {', '.join(allowed)}" if allowed else "; remove it")
    elif kind == "missing":
        msg = "required key is missing; add it"
    elif isinstance(value, dict | list):
        msg = first["msg"]
    else:
        msg = f"{first['msg']} (got {value!r})"
    if len(errors) > 1:
        msg += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return RecipeError(msg, path or None)


def _user_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop pydantic-internal parts: validator tags, and the ``params`` wrapper of operator entries."""
    out: list[Any] = []
    for i, part in enumerate(loc):
        if isinstance(part, str) and (part.startswith("function-") or "[" in part):
            continue
        if part == "params" and i > 0 and isinstance(loc[i - 1], int) and "operators" in loc[:i]:
            continue
        out.append(part)
    return tuple(out)


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return []
        current = _model_in(field.annotation)
        if current is None:
            return []
    fields = getattr(current, "model_fields", {})
    return sorted(k for k in fields if k != "source")


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None
