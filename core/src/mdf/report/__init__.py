"""Human-facing run reports: the end-of-run table (and, later, the HTML report)."""

from mdf.report.table import metrics_table

__all__ = ["metrics_table"]
