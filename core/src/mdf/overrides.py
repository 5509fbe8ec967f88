"""``--set key.path=value`` overrides applied to the raw recipe mapping before validation.

Paths use the same form errors print: ``executor.type``, ``stages[0].replicas.max`` (``stages.0`` works too),
and ``stages[0].operators[1].min_length`` reaches into an operator's parameters. Values are parsed as YAML,
so ``--set executor.batch_rows=1024`` sets an int and ``--set reader.paths=[a.parquet]`` a list. An integer
outside int64, given here or in the file, is refused with its YAML path (:func:`check_integers`).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

from mdf.errors import RecipeError

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_path(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for name, index in _TOKEN.findall(path):
        if index:
            parts.append(int(index))
        elif name.isdigit():
            parts.append(int(name))
        else:
            parts.append(name)
    if not parts:
        raise RecipeError(f"empty override path in {path!r}; write --set key.path=value")
    return parts


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep:
            raise RecipeError(f"override {item!r} has no '='; write --set key.path=value")
        try:
            value = yaml.safe_load(raw) if raw else ""
        except yaml.YAMLError as exc:
            raise RecipeError(f"override {item!r}: value is not valid YAML ({exc})") from None
        _set(data, parse_path(key.strip()), value, key)
    return data


def _set(node: Any, parts: list[str | int], value: Any, key: str) -> None:
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not isinstance(part, int) or part >= len(node):
                raise RecipeError(f"override {key!r}: no list item {part!r} (list has {len(node)} items)")
            if last:
                node[part] = value
                return
            node[part], node = _descend_operator(node[part], parts[i + 1])
            continue
        if not isinstance(node, dict):
            raise RecipeError(f"override {key!r}: cannot set {part!r} inside {node!r}")
        if last:
            node[part] = value
            return
        child = node.get(part)
        if child is None:
            child = [] if isinstance(parts[i + 1], int) else {}
            node[part] = child
        node = child


_INT64 = (-(1 << 63), (1 << 63) - 1)


def check_integers(data: Any, path: str = "") -> None:
    """Exit 2 naming the YAML path of an integer outside int64 (``--set stages[0].operators[0].min_length=1e30``
    written out, or the same in the file): YAML and pydantic take it, then Arrow and the kernels, which hold 64
    bits, failed the run at its first batch (``OverflowError``)."""
    if isinstance(data, bool):
        return
    if isinstance(data, int):
        if not _INT64[0] <= data <= _INT64[1]:
            shown = str(data) if len(str(data)) <= 40 else f"{str(data)[:20]}... ({len(str(data))} digits)"
            near = f"{'-' if data < 0 else ''}1e{len(str(abs(data))) - 1}"
            raise RecipeError(f"{shown} is outside the 64-bit integers mdf holds (at most {_INT64[1]:,}); give a "
                              f"smaller number, or a float (~{near}) where a float is meant", path or None)  # fmt: skip
        return
    if isinstance(data, dict):
        for key, value in data.items():
            check_integers(value, f"{path}.{key}" if path else str(key))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            if path.endswith("operators") and isinstance(item, dict) and len(item) == 1:
                ((_, item),) = item.items()  # {name: params}: errors name stages[0].operators[1].key
            check_integers(item, f"{path}[{i}]")


def _descend_operator(item: Any, next_part: str | int) -> tuple[Any, Any]:
    """Return ``(item, node to descend into)``: ``operators[1].min_length`` reaches the operator's params."""
    if isinstance(item, str):
        item = {item: {}}
    if isinstance(item, dict) and len(item) == 1 and next_part not in item:
        ((name, params),) = item.items()
        if params is None or isinstance(params, dict):
            params = params or {}
            return {name: params}, params
    return item, item
