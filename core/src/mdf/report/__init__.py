"""Human-facing run reports: the end-of-run table, and the HTML page (``<output>/_mdf/report.html``).

``metrics_table`` is imported on first use: every run imports :mod:`mdf.report.build` before its first batch,
and neither it nor this package should cost the run's start-up what only its end needs (rich's tables, the
sections, the SVG writer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mdf.report.table import metrics_table


def __getattr__(name: str) -> Any:
    if name != "metrics_table":
        raise AttributeError(f"module 'mdf.report' has no attribute {name!r}")
    from mdf.report.table import metrics_table

    return metrics_table


__all__ = ["metrics_table"]
