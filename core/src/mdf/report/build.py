"""Build ``<output>/_mdf/report.html`` from a run's metadata (what ``mdf run`` and ``mdf report`` call).

The sections are imported when a page is rendered, not when this module is: every run imports this module
before its first batch, and only its end needs them.
"""

from __future__ import annotations

import os
from pathlib import Path

from mdf.errors import MdfError
from mdf.layout import metrics_path, report_path
from mdf.metrics import RunMetrics

SECTIONS = (
    ("summary", "Summary"),
    ("funnel", "Funnel"),
    ("counters", "Counters"),
    ("throughput", "Throughput"),
    ("latency", "Latency"),
    ("bottleneck", "Bottleneck"),
    ("key-state", "Key state"),
    ("shards", "Shards"),
    ("recipe", "Recipe"),
    ("batch-size", "Batch size"),
    ("projection", "Scale-out"),
)


def load_metrics(output: str | os.PathLike[str]) -> RunMetrics:
    path = metrics_path(Path(output))
    if not path.is_file():
        raise MdfError(f"{output}: no _mdf/metrics.json (not the output folder of an mdf run); pass the writer's path")
    try:
        return RunMetrics.read_json(path)
    except (ValueError, KeyError, TypeError) as exc:  # not JSON, or not the shape mdf writes
        raise MdfError(f"{path}: not a metrics.json mdf can read ({type(exc).__name__}: {exc})") from None


def render(m: RunMetrics) -> str:
    """The page for a run's metrics (with sample rejected rows when the rejected output is still there)."""
    from mdf.report import counters, scale, sections
    from mdf.report.html import page
    from mdf.report.samples import rejected_samples

    reasons = [r for r, _ in sections._reasons_in_order(m)]
    samples = rejected_samples(m.context.rejected_path, m.context.rejected_format, reasons)
    body = {
        "summary": sections.summary(m),
        "funnel": sections.funnel(m, samples),
        "counters": counters.counters(m),
        "throughput": sections.throughput(m),
        "latency": sections.latency(m),
        "bottleneck": scale.bottleneck(m),
        "key-state": scale.key_state(m),
        "shards": sections.shards(m),
        "recipe": sections.recipe(m),
        "batch-size": sections.batch_size(m),
        "projection": scale.projection(m),
    }
    parts = [(i, t, body[i]) for i, t in SECTIONS]
    after = [i for i, _ in SECTIONS].index("bottleneck") + 1
    for sid, stitle, html in scale.executor_sections(m):  # the executor's own: replace a core section or follow it
        at = next((k for k, (i, _, _) in enumerate(parts) if i == sid), None)
        if at is not None:
            parts[at] = (sid, parts[at][1], html)
        else:
            parts.insert(after, (sid, stitle, html))
            after += 1
    title = f"mdf run report: {m.rows_read:,} rows -> {m.rows_written:,} kept"
    subtitle = f"{m.executor} executor, {m.wall_s:,.2f} s, {m.rows_per_s:,.0f} rec/s"
    return page(title, subtitle, parts)


def write_report(output: str | os.PathLike[str]) -> Path:
    """Render the report of the run that wrote ``output`` and write it atomically beside its metadata."""
    html = render(load_metrics(output))
    out = report_path(Path(output))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".html.tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, out)
    return out
