"""Executors: ``inline`` (this machine, every core; the default) and ``ray`` (a cluster), registered as plugins.

Layers, bottom up: :mod:`~mdf.executor.api` (the executor base class), :mod:`~mdf.executor.base` (the plan and
the per-batch chain every executor shares), :mod:`~mdf.executor.passes`, the executors, and
:mod:`~mdf.executor.select` (which executor a recipe gets, and ``run_recipe``). ``run_recipe`` and ``prepare``
are resolved on first use so that importing this package (the plugin manager does, for the base class) stays
cheap and loops back to nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Plan", "prepare", "run_recipe"]


def __getattr__(name: str) -> Any:
    if name in ("Plan", "prepare"):
        from mdf.executor import base

        return getattr(base, name)
    if name == "run_recipe":
        from mdf.executor.select import run_recipe

        return run_recipe
    raise AttributeError(name)
