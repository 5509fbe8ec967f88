"""The report's sections about capacity: the bottleneck stage, the key state, and the scale-out projection."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from mdf import projection as proj
from mdf.metrics import RunMetrics
from mdf.report import plots
from mdf.report.html import plot, section, table
from mdf.report.sections import stage_ranges
from mdf.report.table import describe
from mdf.run_stats import ExecutorSection


def bottleneck(m: RunMetrics) -> Markup:
    """Where operator time went, from the counters every executor keeps; an executor that measures more (Ray's
    busy time per replica) replaces this section with its own (:func:`executor_sections`)."""
    busy = [(s.name, sum(op.time_s for op in s.operators)) for s in m.stages]
    total = sum(b for _, b in busy) or 1.0
    worst = max(busy, key=lambda b: b[1])[0] if busy else "-"
    rows = [[n, b, b / total * 100, b / m.wall_s * 100 if m.wall_s else 0.0] for n, b in busy]
    intro = Markup(
        "<p>Bottleneck: <b>{}</b> (most operator time): the stage to speed up, or to give more replicas on "
        "an executor that has them.</p>"
    ).format(worst)
    img = plots.safely(plots.bars, [n for n, _ in busy], [r[3] for r in rows], "% of wall time", "stage time", None)
    return section("bottleneck", "Bottleneck", intro, plot(img),
                   table(["stage", "operator time s", "share %", "% of wall"], rows, numeric=(1, 2, 3)))  # fmt: skip


def executor_section(sec: ExecutorSection) -> Markup:
    """An executor's section, laid out and escaped like the report's own."""
    parts: list[Any] = [Markup("<p>{}</p>").format(line) for line in sec.lines]
    if sec.bars is not None:
        labels, values, axis = sec.bars
        parts.append(plot(plots.safely(plots.bars, labels, values, axis, sec.title, sec.bars_limit)))
    if sec.headers:
        parts.append(table(sec.headers, sec.rows, numeric=sec.numeric))
    return section(sec.id, sec.title, *parts)


def executor_sections(m: RunMetrics) -> list[tuple[str, str, Markup]]:
    """``(id, title, section)`` for each section the executor contributes (:meth:`ExecutorMetrics.report_sections`).
    A renderer that fails gives one section saying which executor and what failed: the page and the run stand."""
    sections: list[tuple[str, str, Markup]] = []
    try:
        for sec in m.executor_metrics.report_sections():
            sections.append((sec.id, sec.title, executor_section(sec)))
    except Exception as exc:
        title = f"{m.executor} executor"
        text = Markup('<p class="bad">the {} executor\'s report section failed: {}</p>').format(
            m.executor, describe(exc)
        )
        return [("executor-error", title, section("executor-error", title, text))]
    return sections


def key_state(m: RunMetrics) -> Markup:
    ks = m.key_state
    if not ks:
        return section("key-state", "Key state (dedup)", "no deduplicator in this recipe: no key state")
    rows = [
        [ns, k.keys, k.buckets, k.bytes / 2**20, k.bytes_per_key, k.max_bucket_bytes / 2**20] for ns, k in ks.items()
    ]
    headers = ["namespace", "keys", "buckets", "MiB", "bytes/key", "largest bucket MiB"]
    # growth: keys are added by the rows a deduplicator keeps, so the kept rows over time trace the state's size
    width, buckets = m.timeline.bucket_s, m.timeline.ops
    flat = m.operators()
    series: dict[str, list[float]] = {}
    for ns, k in ks.items():
        idx = next((i for i, op in enumerate(flat) if ns.endswith(":" + op.name)), None)
        if idx is None or not buckets:
            continue
        kept = [b[idx][1] if idx < len(b) else 0 for b in buckets]
        total, acc, line = sum(kept) or 1, 0.0, []
        for v in kept:
            acc += v
            line.append(acc / total * k.bytes / 2**20)
        series[ns] = line
    seconds = [(i + 1) * width for i in range(len(buckets))]
    img = plots.safely(plots.growth, seconds, series, "MiB (estimated)") if series else None
    note = Markup(
        '<p class="muted">Growth is estimated: the final size spread over time in proportion to the rows '
        "each deduplicator kept. {} snapshot(s) were taken during the run.</p>"
    ).format(m.key_state_snapshots)
    return section("key-state", "Key state (dedup): size and growth", table(headers, rows, numeric=(1, 2, 3, 4, 5)),
                   plot(img), note)  # fmt: skip


def projection(m: RunMetrics) -> Markup:
    measured = proj.Measured.from_metrics(m)
    rows = proj.cluster_table(measured)
    gpu = proj.needs_gpu(measured)
    headers = ["CPUs", *(["GPUs"] if gpu else []), "rows/s", "bound", "1 B records", "100 B records"]
    body = [
        [r["cpus"], *([r["gpus"]] if gpu else []), r["rows_per_s"], r["bound"],
         proj.human_seconds(r[f"seconds_{proj.RECORDS[0]}"]), proj.human_seconds(r[f"seconds_{proj.RECORDS[1]}"])]
        for r in rows
    ]  # fmt: skip
    costs = [[s.name, s.cpu_s_per_row * 1e6, s.gpu_s_per_row * 1e6] for s in measured.stages]
    costs.append(["read + write", measured.io_cpu_s_per_row * 1e6, 0.0])
    ops = [op.name for op in m.operators()]
    seed = proj.seed_table(ops)
    ours = table(headers, body, numeric=(0, 1, 2) if gpu else (0, 1))
    parts: list[Any] = [
        ours,
        Markup("<h3>Assumptions</h3><ul class=assume>{}</ul>").format(
            Markup("").join(Markup("<li>{}</li>").format(a) for a in proj.assumptions(measured))
        ),
        Markup("<h3>Measured cost per input row</h3>"),
        table(["stage", "CPU us/row", "GPU us/row"], costs, numeric=(1, 2)),
    ]
    seed_pts: list[tuple[int, float]] = []
    if seed:
        seed_pts = [(c, r) for c, _, r in seed["rows"]]
        seed_rows = [[c, g, r, proj.human_seconds(1e9 / r), proj.human_seconds(1e11 / r)] for c, g, r in seed["rows"]]
        theirs = table(["CPUs", "GPUs", "rows/s", "1 B records", "100 B records"], seed_rows, numeric=(0, 1, 2))
        parts[0] = Markup('<div class="side"><div><h3>mdf, from this run</h3>{}</div><div><h3>{}</h3>{}</div></div>'
                          ).format(ours, seed["title"], theirs)  # fmt: skip
    img = plots.safely(plots.scaling, [r["cpus"] for r in rows], [r["rows_per_s"] for r in rows], seed_pts)
    parts.insert(1, plot(img))
    return section("projection", "Scale-out projection", *parts)


__all__ = ["bottleneck", "executor_sections", "key_state", "projection", "stage_ranges"]
