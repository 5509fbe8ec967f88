"""The end-of-run table: one row per operator, then the run's totals and its accounting check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mdf.metrics import RunMetrics
from mdf.run_stats import ExecutorMetrics

if TYPE_CHECKING:
    from rich.table import Table


def executor_lines(m: RunMetrics) -> list[str]:
    """The executor's own lines (:meth:`ExecutorMetrics.run_lines`); a renderer that fails costs its lines
    only, and the table says so."""
    try:
        return [str(line) for line in m.executor_metrics.run_lines()]
    except Exception as exc:
        from rich.markup import escape  # here: the report imports this module, and needs no rich (~12 ms)

        return [f"[red]the {escape(m.executor)} executor's figures could not be shown: {escape(describe(exc))}[/]"]


def startup_seconds(em: ExecutorMetrics) -> float:
    """The executor's start-up seconds, 0 when it does not say or its method fails (a figure, not the run)."""
    try:
        return float(em.startup_seconds() or 0.0)
    except Exception:
        return 0.0


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _top_reasons(reasons: dict[str, int], n: int = 3) -> str:
    items = sorted(reasons.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{k.split(':', 1)[-1]} {v:,}" for k, v in items)


def chosen_settings(m: RunMetrics) -> list[str]:
    """One line per operator that chose settings from the data (``cut/score_filter chose threshold =
    0.8123, ...``), for the table's caption and the report's funnel (:attr:`OperatorMetrics.settings`)."""
    out = []
    for stage in m.stages:
        for op in stage.operators:
            if op.settings:
                shown = ", ".join(
                    f"{k} = {v:.6g}" if isinstance(v, float) else f"{k} = {v}" for k, v in op.settings.items()
                )
                out.append(f"{stage.name}/{op.name} chose {shown}")
    return out


def _startup(m: RunMetrics) -> str:
    startup = startup_seconds(m.executor_metrics)
    if not startup or m.wall_s <= startup:
        return ""
    return f"; {startup:.1f}s of it starting up, {m.rows_read / (m.wall_s - startup):,.0f} rec/s after"


def metrics_table(m: RunMetrics) -> Table:
    from rich.table import Table  # here: the HTML report imports this module for its helpers, not the table

    rate = m.rows_read / m.wall_s if m.wall_s > 0 else 0.0
    check = "balanced" if m.balanced else "MISMATCH"
    if m.damaged:
        files = len({e.file for e in m.damaged})  # a WARC reader goes on after damage: a file may have several
        check += f"; [bold red]{files} DAMAGED INPUT FILE(S), see below[/]"
    table = Table(
        title=f"mdf run ({m.executor}): {m.rows_read:,} read -> {m.rows_written:,} kept + {m.rows_rejected:,} "
        f"rejected ({check}) in {m.wall_s:.2f}s ({rate:,.0f} rec/s{_startup(m)})",
        title_justify="left",
    )
    for col in ("stage", "operator", "rows in", "rows out", "pass", "rejected (top reasons)", "time s", "rec/s"):
        table.add_column(col, justify="right" if col in ("rows in", "rows out", "pass", "time s", "rec/s") else "left")
    if m.reader_reasons:
        n = sum(m.reader_reasons.values())
        table.add_row("read", "reader", "", "", "", f"{n:,}: {_top_reasons(m.reader_reasons)}", "", "")
    for stage in m.stages:
        for op in stage.operators:
            table.add_row(
                stage.name,
                op.name,
                f"{op.rows_in:,}",
                f"{op.rows_out:,}",
                f"{op.pass_rate:.1%}",
                f"{op.rows_rejected:,}" + (f": {_top_reasons(op.reasons)}" if op.reasons else ""),
                f"{op.time_s:.3f}",
                f"{op.rows_per_s:,.0f}",
            )
    lines = [
        "balanced: rows read = kept + rejected, every row accounted for"
        if m.balanced
        else "MISMATCH: rows read != kept + rejected; rows were lost or duplicated (a bug: please report it)"
    ]
    lines += chosen_settings(m)
    lines += [f"[red]damaged input: {e.describe()}[/]" for e in m.damaged[:20]]
    if len(m.damaged) > 20:
        lines.append(f"[red]... and {len(m.damaged) - 20} more damaged parts (metrics.json lists all)[/]")
    if m.resumed is not None:
        lines.append(f"resumed: {m.resumed.skipped_shards} shard(s) restored from the earlier run, counts included")
    lines += executor_lines(m)
    for ns, k in m.key_state.items():
        lines.append(
            f"key state {ns}: {k.keys:,} keys in {k.buckets} bucket(s), {k.bytes / 2**20:,.1f} MiB "
            f"({k.bytes_per_key} B/key, largest bucket {k.max_bucket_bytes / 2**20:,.1f} MiB)"
        )
    for p in m.passes:
        lines.append(f"cluster pass {p.collect}: {p.rows_in_clusters:,} rows in {p.clusters:,} clusters")
    table.caption = "\n".join(lines)
    table.caption_justify = "left"
    return table
