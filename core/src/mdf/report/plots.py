"""The report's plots: SVG drawn by :mod:`mdf.report.svg`, embedded as ``<img src="data:image/svg+xml;...">``.

Why SVG: no JavaScript in the page (the numbers stay readable with scripts off and nothing can call out), small,
scales on any screen, text kept as text. Why our own writer: it draws the six charts in milliseconds with
nothing to install (matplotlib cost seconds of import and drawing on every run). Embedding each SVG as an
*image* rather than inline markup means nothing in a plot (a stage name, a reason) is ever parsed as the page's
HTML, and an SVG loaded as an image cannot run scripts whatever it contains.

Each function returns ``(data URI, alt text)``; :func:`safely` turns a plot that fails to draw into ``None``
(the page says so and keeps the section's table), so a chart never costs the report, let alone the run.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

from mdf.recording import LATENCY_EDGES_S
from mdf.report import svg
from mdf.report.svg import PALETTE, Series

LIGHT = "#bfdbfe"


def _img(doc: str, alt: str) -> tuple[str, str]:
    return "data:image/svg+xml;base64," + base64.b64encode(doc.encode()).decode("ascii"), alt


def _short(name: str, n: int = 28) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"


def funnel(operators: Sequence[tuple[str, int, int]]) -> tuple[str, str]:
    """Horizontal bars: rows in (light) and rows out (dark, inside) per operator, in pipeline order."""
    alt = "rows in and out per operator"
    names = [_short(n) for n, _, _ in operators]
    series = [("rows in", [i for _, i, _ in operators], LIGHT, 1.0), ("rows out", [o for _, _, o in operators],
              PALETTE[0], 0.55)]  # fmt: skip
    return _img(svg.hbars(names, series, "rows", alt), alt)


def throughput(seconds: Sequence[float], series: dict[str, Sequence[float]]) -> tuple[str, str]:
    """Rows/s per stage over the run (one step line each), from the recorded time buckets."""
    alt = "rows per second into each stage over time"
    lines = []
    for i, (name, values) in enumerate(series.items()):
        done = name.startswith("(")
        lines.append(Series(_short(name), seconds, values, step="mid", dashed=done, width=1.4 if done else 1.8,
                            color="#6b7280" if done else PALETTE[i % len(PALETTE)]))  # fmt: skip
    doc = svg.lines(lines, "seconds since the run started", "rows/s into the stage", alt)
    return _img(doc, alt)


def _duration(v: float) -> str:
    return f"{v * 1e3:g} ms" if v < 1 else f"{v:g} s"


def latency(histograms: dict[str, Sequence[int]]) -> tuple[str, str]:
    """Batch latency per operator: counts per (doubling) latency bin, one histogram outline per operator."""
    alt = "histogram of batch latency per operator"
    edges = [0.0, *LATENCY_EDGES_S]
    used = [i for h in histograms.values() for i, c in enumerate(h) if c]
    lo, hi = (min(used), max(used) + 1) if used else (0, 1)
    xs = [max(edges[i], LATENCY_EDGES_S[0] / 2) for i in range(lo, hi + 1)]
    lines = [Series(_short(name), xs, list(counts[lo:hi]), step="edges", width=1.6)
             for name, counts in histograms.items()]  # fmt: skip
    doc = svg.lines(lines, "batch latency", "batches", alt, xlog=True, xfmt=_duration)
    return _img(doc, alt)


def bars(labels: Sequence[str], values: Sequence[float], xlabel: str, alt: str, limit: float | None = None):
    """One horizontal bar per label (replica utilisation, per-stage CPU cost)."""
    doc = svg.hbars([_short(n, 36) for n in labels], [("", list(values), PALETTE[1], 0.8)], xlabel, alt, limit)
    return _img(doc, alt)


def growth(seconds: Sequence[float], series: dict[str, Sequence[float]], ylabel: str) -> tuple[str, str]:
    """Key-state size over time (estimated from the rows each deduplicator kept)."""
    alt = "key-state size over time"
    lines = [Series(_short(name, 40), seconds, values) for name, values in series.items()]
    return _img(svg.lines(lines, "seconds since the run started", ylabel, alt, height=230), alt)


def scaling(cpus: Sequence[int], rows_per_s: Sequence[float], seed: Sequence[tuple[int, float]]) -> tuple[str, str]:
    """Projected rows/s against cluster CPUs (log-log), with the seed's figures where the recipe matches."""
    alt = "projected throughput against cluster size"
    lines = [Series("mdf projection (this run)", list(cpus), list(rows_per_s), marker=True)]
    if seed:
        lines.append(Series("seed's table", [c for c, _ in seed], [r for _, r in seed], marker=True, dashed=True))
    ticks = [(float(c), f"{c:,}") for c in cpus]
    doc = svg.lines(lines, "cluster CPUs", "rows/s", alt, xlog=True, ylog=True, xticks=ticks)
    return _img(doc, alt)


def safely(make: Callable[..., tuple[str, str]], *args: Any) -> tuple[str, str] | None:
    """A plot, or None when it cannot be drawn (the section's table carries the numbers)."""
    try:
        return make(*args)
    except Exception:  # a chart is a convenience: odd numbers (NaN, empty series) must not cost the report
        return None
