"""Module attributes imported on first use (PEP 562), for packages whose import must stay cheap.

``mdf`` and the plugins export classes by name from a table instead of importing every module: loading a plugin
for a run must import only what the recipe uses (``tests/test_start_up.py`` checks it by module list).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``name`` is imported from ``table[name]`` on first access and
    kept in the package's namespace, so later accesses cost nothing."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
