"""The closing lines of ``mdf run`` and ``mdf demo``: where the kept rows, the rejected rows, the metrics, the
report and the log are.

One place for both commands, so a newcomer finishing the demo learns the same layout ``mdf run`` prints.
"""

from __future__ import annotations

from rich.console import Console

from mdf import layout
from mdf.metrics import RunMetrics
from mdf.recipe import Recipe
from mdf.terminal import shown


def where_lines(recipe: Recipe, metrics: RunMetrics | None = None) -> list[str]:
    """``kept rows: out/``, ``rejected rows (with _reason): rejected/`` (when the recipe keeps them), ``metrics:``,
    and with the run's ``metrics``: the report and the log files the run wrote."""
    out = str(recipe.writer.params.get("path", "."))
    lines = [f"kept rows: {out.rstrip('/')}/"]
    if recipe.rejected is not None:
        lines.append(f"rejected rows (with _reason): {str(recipe.rejected.params.get('path', '.')).rstrip('/')}/")
    else:
        lines.append("rejected rows: not kept (add `rejected: {type: parquet, path: rejected/}` to the recipe)")
    lines.append(f"metrics: {layout.metrics_path(out)}")
    if metrics is None:
        return lines
    if metrics.report is not None:
        lines.append(f"report: {metrics.report}")
    elif metrics.report_error:
        lines.append(f"report: not written ({metrics.report_error}); retry with `mdf report {out}`")
    if layout.log_path(out).exists():
        lines.append(f"log: {layout.log_path(out)}")
    try:
        lines += [f"{what}: {path}" for what, path in metrics.executor_metrics.log_dirs()]
    except Exception as exc:  # a plugin's figure, not the run
        lines.append(f"{metrics.executor} executor's logs: unknown ({type(exc).__name__}: {exc})")
    return lines


def print_where(console: Console, recipe: Recipe, metrics: RunMetrics | None = None) -> None:
    for line in where_lines(recipe, metrics):
        console.print(shown(line), highlight=False, soft_wrap=True)  # paths are text, never markup
