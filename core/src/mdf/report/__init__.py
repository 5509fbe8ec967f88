"""Human-facing run reports: the end-of-run table, and the HTML page (``<output>/_mdf/report.html``)."""

from mdf.report.table import metrics_table

__all__ = ["metrics_table"]
