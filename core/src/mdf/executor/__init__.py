"""Executors: ``inline`` (this machine, every core; the default) and ``ray`` (a cluster), registered as plugins
like any third-party executor.

Layers, bottom up: :mod:`~mdf.executor.api` (the executor base class, its params and ``workers: auto``),
:mod:`~mdf.plan` (a recipe resolved against the plugins, with its input listed),
:mod:`~mdf.executor.base` (``prepare`` and the per-batch chain every executor shares),
:mod:`~mdf.executor.batches` (the shard loop's typed messages, its read step with the one offset rule, and the
driver's bookkeeping, shared by every executor), :mod:`~mdf.executor.passes` (key state, cluster-dedup passes,
checkpoints), :mod:`~mdf.executor.shard` (the shard runner every executor runs),
the executors with their metrics records (``inline``/``inline_pass``/``inline_metrics``, and the package
``ray``), and
:mod:`~mdf.executor.select` (building the executor :func:`mdf.resolve.choose_executor` picks, and
``run_recipe``). ``run_recipe``, ``prepare`` and ``Plan`` are resolved on first use so that importing this
package (the plugin manager does, for the base class) stays cheap and loops back to nothing.
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
