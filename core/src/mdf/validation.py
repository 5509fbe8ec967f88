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
    """Build a RecipeError from the first problem (and say how many more there are).

    Errors of one value against each member of a union (``int | Literal['auto']``) are one problem: their
    expectations are joined (``Input should be a valid integer or 'auto'``) and pydantic's member tags
    (``batch_rows.int``) never reach the path.

    :param model: the model that was validated, used to tell union tags from keys and to list the allowed keys
        after an unknown one.
    """
    errors = exc.errors(include_url=False)
    locs = [_user_loc(e["loc"], model) for e in errors]
    first, loc = errors[0], locs[0]
    same = [e for e, lc in zip(errors, locs, strict=True) if lc == loc]
    problems = len({lc for lc in locs})
    path = loc_to_path(root, loc)
    kind = first["type"]
    value = first.get("input")
    if kind == "extra_forbidden":
        allowed = _fields_at(model, loc[:-1]) if model else []
        msg = f"unknown key '{loc[-1]}'" + (f"; allowed: {', '.join(allowed)}" if allowed else "; remove it")
    elif kind == "missing":
        msg = "required key is missing; add it"
    else:
        msg = _joined_msg(same)
        if not isinstance(value, dict | list) and repr(value) not in msg:
            msg += f" (got {value!r})"
    if problems > 1:
        msg += f" (and {problems - 1} more problem{'s' if problems > 2 else ''})"
    return RecipeError(msg, path or None)


def _joined_msg(errors: list[Any]) -> str:
    """One message for the errors of one value: ``Input should be A or B`` when each says what it should be."""
    msgs = [e["msg"].removeprefix("Value error, ") for e in errors]
    wanted = [m.removeprefix("Input should be ").split(", unable to")[0] for m in msgs]
    if len(msgs) > 1 and all(m.startswith("Input should be ") for m in msgs):
        return "Input should be " + " or ".join(dict.fromkeys(wanted))
    return msgs[0]


def _user_loc(loc: tuple[Any, ...], model: type[BaseModel] | None = None) -> tuple[Any, ...]:
    """Drop pydantic-internal parts: union member and validator tags, the ``params`` wrapper of operators."""
    out: list[Any] = []
    for i, part in enumerate(loc):
        if isinstance(part, str) and (part.startswith("function-") or "[" in part):
            continue
        if part == "params" and i > 0 and isinstance(loc[i - 1], int) and "operators" in loc[:i]:
            continue
        if isinstance(part, str) and out and _is_member_tag(model, tuple(out), part):
            continue
        out.append(part)
    return tuple(out)


_SCALAR_TAGS = frozenset({"int", "float", "str", "bool", "bytes", "none", "is-instance", "literal"})


def _is_member_tag(model: type[BaseModel] | None, at: tuple[Any, ...], part: str) -> bool:
    """True when ``part`` follows a value that has no keys (a scalar or a union of them), so it can only be
    pydantic's name for a union member (``int``, ``str``); keys of models and of dicts are kept."""
    found, annotation = _annotation_at(model, at) if model is not None else (False, None)
    if not found:
        return part in _SCALAR_TAGS
    return _model_in(annotation) is None and not _has_dict(annotation)


def _annotation_at(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[bool, Any]:
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        found = _model_in(current)
        field = found.model_fields.get(part) if found is not None else None
        if field is None:
            return False, None
        current = field.annotation
    return True, current


def _has_dict(annotation: Any) -> bool:
    if typing.get_origin(annotation) in (dict, typing.Mapping) or annotation is dict:
        return True
    return any(_has_dict(a) for a in typing.get_args(annotation))


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
