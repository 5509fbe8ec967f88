"""The report's sections about where rows and time went: summary, funnel, throughput, latency, shards, recipe.

Each function takes the run's metrics (``metrics.json`` read back by :meth:`mdf.metrics.RunMetrics.from_dict`)
and returns one ``<section>`` as Markup; every number is in a table (readable with scripts off), and an SVG
plot sits beside it.
"""

from __future__ import annotations

import time
from typing import Any

import yaml
from markupsafe import Markup

from mdf.metrics import RunMetrics
from mdf.recording import LATENCY_EDGES_S, histogram_quantile
from mdf.report import plots
from mdf.report.html import num, plot, section, table
from mdf.report.table import chosen_settings, startup_seconds
from mdf.run_stats import Machine


def stage_ranges(m: RunMetrics) -> list[tuple[str, int, int]]:
    """``(stage, first op index, end op index)`` in the flattened operator order the timeline uses."""
    out, k = [], 0
    for s in m.stages:
        out.append((s.name, k, k + len(s.operators)))
        k += len(s.operators)
    return out


def _rate(rows: float, seconds: float) -> float:
    return rows / seconds if seconds > 0 else 0.0


def summary(m: RunMetrics) -> Markup:
    machine = m.context.machine or Machine()
    cluster = machine.cluster
    memory = "?" if machine.memory_gb is None else machine.memory_gb
    where = f"{machine.cpus or '?'} CPUs, {memory} GB, {machine.os}"
    if cluster:
        where += f"; Ray cluster: {cluster.nodes} node(s), {cluster.cpus:g} CPUs, {cluster.gpus:g} GPUs"
    started = m.timeline.started_at
    cards = [
        ("rows in", f"{m.rows_read:,}"),
        ("kept", f"{m.rows_written:,}"),
        ("rejected", f"{m.rows_rejected:,}"),
        ("wall time", f"{m.wall_s:,.2f} s"),
        ("throughput", f"{m.rows_per_s:,.0f} rec/s"),
        ("executor", m.executor),
        ("shards", f"{m.shards:,}"),
        ("batches", f"{m.batches:,}"),
    ]
    card_html = Markup("").join(
        Markup('<div class="card"><b>{}</b><span>{}</span></div>').format(v, k) for k, v in cards
    )
    check = Markup('<span class="ok">balanced</span>') if m.balanced else Markup('<span class="bad">MISMATCH</span>')
    lines = [
        Markup('<div class="cards">{}</div>').format(card_html),
        Markup("<p>rows in = kept + rejected: {} ({:,} = {:,} + {:,})</p>").format(
            check, m.rows_read, m.rows_written, m.rows_rejected
        ),
        Markup('<p class="muted">machine: {}; mdf {}, Python {}{}</p>').format(
            where,
            machine.mdf or "?",
            machine.python or "?",
            f"; started {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(started))}" if started else "",
        ),
    ]
    startup = startup_seconds(m.executor_metrics)
    if startup:
        lines.append(
            Markup('<p class="muted">{:.1f} s of the wall time was starting up: {:,.0f} rec/s after</p>').format(
                startup, _rate(m.rows_read, m.wall_s - startup)
            )
        )
    if m.resumed is not None:
        lines.append(
            Markup("<p>resumed: {:,} shard(s) completed by the killed run were skipped</p>").format(
                m.resumed.skipped_shards
            )
        )
    return section("summary", "Summary", *lines)


def _top(reasons: dict[str, int], n: int = 3) -> list[tuple[str, int]]:
    return sorted(reasons.items(), key=lambda kv: -kv[1])[:n]


def funnel(m: RunMetrics, samples: dict[str, list[dict[str, str]]]) -> Markup:
    rows: list[list[Any]] = []
    bars: list[tuple[str, int, int]] = []
    if m.reader_reasons:
        n = sum(m.reader_reasons.values())
        top = ", ".join(f"{k} {v:,}" for k, v in _top(m.reader_reasons))
        rows.append(["read", "(reader)", "reader", m.rows_read, m.rows_read - n, "", n, top])
    for s in m.stages:
        for op in s.operators:
            top = ", ".join(f"{k} {v:,}" for k, v in _top(op.reasons))
            rate = Markup('<td class="n" data-v="{}">{:.1%}</td>').format(round(op.pass_rate, 6), op.pass_rate)
            rows.append([s.name, op.name, op.kind, op.rows_in, op.rows_out, rate, op.rows_rejected, top])
            bars.append((f"{s.name}/{op.name}", op.rows_in, op.rows_out))
    headers = ["stage", "operator", "kind", "rows in", "rows out", "pass", "rejected", "top reasons"]
    body: list[Markup | str] = [
        Markup('<div id="funnel-table">{}</div>').format(table(headers, rows, numeric=(3, 4, 5, 6))),
        plot(plots.safely(plots.funnel, bars)) if bars else "",
    ]
    for line in chosen_settings(m):  # a cut the run chose from the data (a top_fraction's threshold)
        body.append(Markup('<p class="setting">{}</p>').format(line))
    reasons = _reasons_in_order(m)
    if reasons:
        body.append(Markup("<h3>Drop reasons, with up to three rejected rows each</h3>"))
        if not samples:
            body.append(
                Markup('<p class="muted">{}</p>').format(
                    "no rejected output was written (set rejected: in the recipe to see sample rows)"
                    if not m.context.rejected_path
                    else "no sample rows found in the rejected output"
                )
            )
        for reason, count in reasons:
            body.append(Markup("<h3>{} <span class=muted>({:,} rows)</span></h3>").format(reason, count))
            rows_ = samples.get(reason) or []
            if rows_:
                cols = list(rows_[0])
                body.append(table(cols, [[r.get(c, "") for c in cols] for r in rows_], cls="sample"))
    return section("funnel", "Funnel: rows in and out per operator", *body)


def _reasons_in_order(m: RunMetrics, per_op: int = 3) -> list[tuple[str, int]]:
    """The top reasons of the reader and of every operator, in pipeline order."""
    out = _top(m.reader_reasons, per_op)
    for op in m.operators():
        out += _top(op.reasons, per_op)
    return out


def throughput(m: RunMetrics) -> Markup:
    tl = m.timeline
    buckets = tl.ops
    if not buckets:
        return section("throughput", "Throughput over time", "no batches were recorded")
    width = tl.bucket_s
    seconds = [(i + 0.5) * width for i in range(len(buckets))]
    series: dict[str, list[float]] = {}
    for name, first, _ in stage_ranges(m):
        series[name] = [b[first][0] / width if first < len(b) else 0.0 for b in buckets]
    series["(finished)"] = [d / width for d in tl.done]
    rows = []
    for name, values in series.items():
        full = values[:-1] if len(values) > 2 else values  # the last bucket is cut short by the run's end
        active = [v for v in full if v > 0] or [0.0]
        median = sorted(active)[len(active) // 2]
        rows.append([name, round(sum(values) / len(values)), round(max(active)), round(median), round(min(active))])
    note = Markup(
        '<p class="muted">rows/s in {:g} s buckets since the run started ({} buckets); rates count the rows '
        "that entered each stage, spread over the time their batch took; the last bucket (cut short by the end "
        "of the run) is left out of the median and lowest.</p>"
    ).format(width, len(buckets))
    return section(
        "throughput",
        "Throughput over time per stage",
        note,
        plot(plots.safely(plots.throughput, seconds, series)),
        table(["stage", "mean rows/s", "peak", "median (active)", "lowest (active)"], rows, numeric=(1, 2, 3, 4)),
    )


def latency(m: RunMetrics) -> Markup:
    hists: dict[str, list[int]] = {}
    rows = []
    for s in m.stages:
        for op in s.operators:
            h = op.latency
            label = f"{s.name}/{op.name}"
            if sum(h):
                hists[label] = h
            mean = op.time_s / op.batches if op.batches else 0.0
            q = [histogram_quantile(h, x) * 1e3 for x in (0.5, 0.9, 0.99)] if h else [0.0, 0.0, 0.0]
            rows.append([label, op.batches, mean * 1e3, *q, op.time_s])
    note = Markup(
        '<p class="muted">quantiles are upper edges of doubling bins ({:g} us to {:g} s): within a factor of two.</p>'
    ).format(LATENCY_EDGES_S[0] * 1e6, round(LATENCY_EDGES_S[-1], 1))
    headers = ["operator", "batches", "mean ms", "p50 ms <=", "p90 ms <=", "p99 ms <=", "total s"]
    return section(
        "latency",
        "Batch latency per operator",
        plot(plots.safely(plots.latency, hists)) if hists else "",
        table(headers, rows, numeric=(1, 2, 3, 4, 5, 6)),
        note,
    )


def shards(m: RunMetrics) -> Markup:
    log = m.shard_log.shards
    resumed = set(m.resumed.shards if m.resumed is not None else [])
    rows = []
    for shard, (n, kept, damaged, batches, began, done) in log.items():
        status = Markup('<span class="bad">damaged input</span>') if damaged else "ok"
        rows.append([shard, int(n), int(kept), int(damaged), int(batches), round(done - began, 3), done, status])
    for shard in sorted(resumed - set(log)):
        rows.append([shard, "", "", "", "", "", "", "resumed: done by the earlier run"])
    damaged_n = sum(1 for r in rows if r[3])
    head = Markup(
        "<p>{:,} shard(s) processed, {:,} with damaged input rows, {:,} skipped on resume. Time is from the start "
        "of work on a shard's first batch to the end of its last (on Ray, shards overlap). Click a column to sort.</p>"
    ).format(len(log), damaged_n, len(resumed))
    headers = ["shard", "rows", "kept", "damaged rows", "batches", "time s", "done at s", "status"]
    body = Markup('<div class="scroll">{}</div>').format(
        table(headers, rows, cls="sortable", numeric=(1, 2, 3, 4, 5, 6))
    )
    return section("shards", "Shards", head, body)


def recipe(m: RunMetrics) -> Markup:
    rec = m.context.recipe
    if not rec:
        return section("recipe", "Recipe as run", "the recipe was not recorded (a run of an older mdf)")
    text = yaml.safe_dump(rec, sort_keys=False, allow_unicode=True)
    return section("recipe", "Recipe as run (after --set overrides)", Markup("<pre>{}</pre>").format(text))


def batch_size(m: RunMetrics) -> Markup:
    part = m.context.batch_plan  # the planner's record, as `mdf plan --json` prints it
    rows_ = m.context.batch_rows
    if not part:
        return section(
            "batch-size",
            "Batch size",
            Markup(
                "<p>batch_rows: <b>{}</b>, set by the recipe. Set <code>executor.batch_rows: auto</code> for the "
                "planner's choice, or run <code>mdf plan RECIPE</code> to see it and its rules.</p>"
            ).format(f"{rows_:,}" if isinstance(rows_, int) else "?"),
        )
    facts = [
        ["batch_rows", part["batch_rows"]],
        ["batches", part["batches"]],
        ["max_in_flight", part["max_in_flight"]],
        ["rows sampled", part["rows_sampled"]],
        ["p90 row bytes", part["p90_bytes"]],
        ["batch MB", part["batch_mb"]],
    ]
    rules = [[r["rule"], r["reason"]] for r in part.get("rules", [])]
    return section(
        "batch-size",
        "Batch size: the planner's choice and its rules",
        table(["choice", "value"], facts, numeric=(1,)),
        Markup("<h3>Rules that fired, in order</h3>"),
        table(["rule", "why"], rules),
    )


__all__ = ["batch_size", "funnel", "latency", "num", "recipe", "shards", "stage_ranges", "summary", "throughput"]
