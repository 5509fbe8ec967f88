"""The ``mdf`` entry points, scanned once per ``sys.path``.

A scan reads the metadata of every installed distribution (~90 in a dev venv: 10-20 ms), and one ``mdf run``
asked for the group twice: the plugin manager at load (:mod:`mdf.plugins`) and the report's reader of
``metrics.json`` (:func:`mdf.metrics.executor_metrics_type`), which must not load every plugin for one class.
The plugin manager scans afresh (it loads once per process, and a plugin installed since must be seen); the
metrics reader reuses that scan when ``sys.path``, where distributions are found, has not changed since.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points  # the standard library's: the backport costs ~50 ms

GROUP = "mdf"


def mdf_entry_points(fresh: bool = False) -> tuple[EntryPoint, ...]:
    """The entry points of group ``mdf`` on the current ``sys.path`` (``fresh``: scanned now, not reused)."""
    if fresh:
        _scan.cache_clear()
    return _scan(tuple(sys.path))


@lru_cache(maxsize=4)
def _scan(path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    return tuple(entry_points(group=GROUP))
