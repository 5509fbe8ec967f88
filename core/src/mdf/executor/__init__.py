"""Executors: ``inline`` (one process, the reference semantics); ``ray`` plugs in beside it."""

from mdf.executor.base import Plan, prepare, run_recipe

__all__ = ["Plan", "prepare", "run_recipe"]
