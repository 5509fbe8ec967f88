"""A small SVG chart writer for the run report: horizontal bars, and lines or step lines on linear or log axes.

Why our own and not a plotting library: the report draws six simple charts at the end of every run, and
matplotlib took 2-2.5 s to import and draw them on two loaded cores (most of a short run's fixed cost, and 76 MB
installed). These charts need only axes with round ticks, bars, polylines and a legend: a few hundred lines of
string formatting that write the whole report in ~15 ms, with nothing to install. Every text from the data
passes through :func:`markupsafe.escape`, so a stage or reason name is always text in the XML.

Sizes are in CSS pixels; the SVG carries a ``viewBox`` and scales with the page.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import escape

PALETTE = ("#2563eb", "#f97316", "#16a34a", "#dc2626", "#9333ea", "#0891b2", "#ca8a04", "#db2777")
WIDTH = 860
FONT = 12
CHAR_PX = 6.6  # mean advance of a 12 px sans-serif character: enough to size margins and the legend
INK, MUTED, GRID = "#111827", "#6b7280", "#e5e7eb"


@dataclass
class Series:
    """One line: ``step`` is ``None`` (straight segments), ``"mid"`` (each value held around its x) or
    ``"edges"`` (a histogram: ``xs`` has one more value than ``ys``, each value held between two edges)."""

    label: str
    xs: Sequence[float]
    ys: Sequence[float]
    color: str | None = None
    dashed: bool = False
    marker: bool = False
    step: str | None = None
    width: float = 1.8


@dataclass
class Scale:
    """Maps data values to pixels between ``px0`` and ``px1``, linearly or by their logarithm."""

    lo: float
    hi: float
    px0: float
    px1: float
    log: bool = False

    def __call__(self, v: float) -> float:
        f = _unit(self.lo, self.hi, v, self.log)
        return self.px0 + f * (self.px1 - self.px0)


def _unit(lo: float, hi: float, v: float, log: bool) -> float:
    if log:
        lo, hi, v = math.log10(lo), math.log10(hi), math.log10(max(v, 1e-300))
    return 0.5 if hi == lo else (v - lo) / (hi - lo)


def si(value: float) -> str:
    """``1.5K``, ``2M``: short tick labels."""
    for unit, n in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= n:
            return f"{value / n:g}{unit}"
    return f"{value:g}"


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten) covering ``lo..hi``, about ``n`` of them."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    ticks, v = [], math.floor(lo / step) * step
    while v < hi + step * 0.999:
        ticks.append(round(v, 12))
        v += step
    return ticks


def log_ticks(lo: float, hi: float) -> list[float]:
    """Powers of ten covering ``lo..hi`` (both > 0)."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [10.0**k for k in range(a, max(b, a + 1) + 1)]


def _text(x: float, y: float, s: str, anchor: str = "start", color: str = INK, rot: bool = False) -> str:
    turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rot else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{color}" font-size="{FONT}"{turn}>'
        f"{escape(s)}</text>"
    )


def _doc(height: float, parts: list[str], alt: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif" '
        f'role="img"><title>{escape(alt)}</title><rect width="100%" height="100%" fill="#fff"/>'
        + "".join(parts)
        + "</svg>"
    )


def _legend(items: list[tuple[str, str, bool]], right: float, y: float) -> list[str]:
    """Swatches and labels in one row ending at ``right``: ``(label, color, dashed)``."""
    widths = [28 + len(label) * CHAR_PX + 14 for label, _, _ in items]
    x = max(4.0, right - sum(widths))
    out = []
    for (label, color, dashed), w in zip(items, widths, strict=True):
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        out.append(f'<line x1="{x:.1f}" y1="{y - 4:.1f}" x2="{x + 20:.1f}" y2="{y - 4:.1f}" stroke="{color}" '
                   f'stroke-width="3"{dash}/>')  # fmt: skip
        out.append(_text(x + 26, y, label))
        x += w
    return out


def hbars(
    labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float], str, float]],
    xlabel: str,
    alt: str,
    xmax: float | None = None,
    fmt: Callable[[float], str] = si,
) -> str:
    """Horizontal bars, one row per label, top to bottom in the order given; ``series`` are drawn over each
    other (``(legend label, values, color, bar thickness 0..1)``), so a narrower second series shows inside
    the first (rows out inside rows in)."""
    row = 22.0
    left = min(300.0, 16 + max((len(s) for s in labels), default=4) * CHAR_PX)
    top, bottom, right = 30.0 if len(series) > 1 else 12.0, 44.0, WIDTH - 20.0
    height = top + row * len(labels) + bottom
    hi = xmax if xmax is not None else max((v for _, vs, _, _ in series for v in vs), default=1.0) or 1.0
    ticks = nice_ticks(0.0, hi)
    hi = ticks[-1] if xmax is None else xmax
    ticks = [t for t in ticks if t <= hi + 1e-9]
    x = Scale(0.0, hi, left, right)
    base = top + row * len(labels)
    parts = []
    for t in ticks:
        parts.append(f'<line x1="{x(t):.1f}" y1="{top:.1f}" x2="{x(t):.1f}" y2="{base:.1f}" stroke="{GRID}"/>')
        parts.append(_text(x(t), base + 16, fmt(t), "middle", MUTED))
    for _, values, color, thick in series:
        h = row * 0.8 * thick
        for i, v in enumerate(values):
            y = top + row * i + (row - h) / 2
            w = max(0.0, x(min(max(v, 0.0), hi)) - left)
            parts.append(f'<rect x="{left:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{color}"/>')
    for i, label in enumerate(labels):
        parts.append(_text(left - 6, top + row * i + row / 2 + 4, label, "end"))
    parts.append(f'<line x1="{left:.1f}" y1="{top:.1f}" x2="{left:.1f}" y2="{base:.1f}" stroke="{MUTED}"/>')
    parts.append(_text((left + right) / 2, base + 34, xlabel, "middle"))
    if len(series) > 1:
        parts += _legend([(name, color, False) for name, _, color, _ in series], right, 18)
    return _doc(height, parts, alt)


def lines(
    series: Sequence[Series],
    xlabel: str,
    ylabel: str,
    alt: str,
    xlog: bool = False,
    ylog: bool = False,
    xticks: Sequence[tuple[float, str]] | None = None,
    xfmt: Callable[[float], str] = si,
    yfmt: Callable[[float], str] = si,
    height: float = 250.0,
) -> str:
    """Lines (or step lines) on one pair of axes; a linear y axis starts at zero. A value a log axis cannot
    show (zero or less) is left out of its line."""
    left, right, top, bottom = 64.0, WIDTH - 16.0, 30.0, 44.0
    drawn = [_points(s) for s in series]
    xs = [a for pts in drawn for a, _ in pts if not xlog or a > 0]
    ys = [b for pts in drawn for _, b in pts if not ylog or b > 0]
    x_lo, x_hi = (min(xs), max(xs)) if xs else (1.0, 10.0)
    y_lo, y_hi = (min(ys), max(ys)) if ys else (1.0, 10.0)
    if xticks:
        x_lo, x_hi = min(x_lo, *(t for t, _ in xticks)), max(x_hi, *(t for t, _ in xticks))
        xt = list(xticks)
    else:
        xt = [(t, xfmt(t)) for t in (log_ticks(x_lo, x_hi) if xlog else nice_ticks(x_lo, x_hi))]
        if not xlog:
            x_lo, x_hi = min(x_lo, xt[0][0]), max(x_hi, xt[-1][0])
    if xlog:
        xt = [(t, s) for t, s in xt if x_lo / 1.001 <= t <= x_hi * 1.001] or xt
        if x_hi <= x_lo:
            x_lo, x_hi = x_lo / 2, x_lo * 2
    if ylog:
        yv = log_ticks(y_lo, y_hi)
        y_lo, y_hi = yv[0], yv[-1]
    else:
        yv = nice_ticks(0.0, max(y_hi, 0.0) or 1.0)
        y_lo, y_hi = 0.0, yv[-1]
    base = height - bottom
    x = Scale(x_lo, x_hi, left, right, xlog)
    y = Scale(y_lo, y_hi, base, top, ylog)
    parts = []
    for t in yv:
        parts.append(f'<line x1="{left:.1f}" y1="{y(t):.1f}" x2="{right:.1f}" y2="{y(t):.1f}" stroke="{GRID}"/>')
        parts.append(_text(left - 6, y(t) + 4, yfmt(t), "end", MUTED))
    for t, label in xt:
        parts.append(f'<line x1="{x(t):.1f}" y1="{base:.1f}" x2="{x(t):.1f}" y2="{base + 4:.1f}" stroke="{MUTED}"/>')
        parts.append(_text(x(t), base + 17, label, "middle", MUTED))
    parts.append(f'<polyline points="{left:.1f},{top:.1f} {left:.1f},{base:.1f} {right:.1f},{base:.1f}" '
                 f'fill="none" stroke="{MUTED}"/>')  # fmt: skip
    legend = []
    for i, (s, pts) in enumerate(zip(series, drawn, strict=True)):
        color = s.color or PALETTE[i % len(PALETTE)]
        path = " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in pts if (not xlog or a > 0) and (not ylog or b > 0))
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="{s.width}" '
                     f'stroke-linejoin="round"{dash}/>')  # fmt: skip
        if s.marker:
            shown = [(a, b) for a, b in zip(s.xs, s.ys, strict=False) if (not xlog or a > 0) and (not ylog or b > 0)]
            parts += [f'<circle cx="{x(a):.1f}" cy="{y(b):.1f}" r="3.5" fill="{color}"/>' for a, b in shown]
        legend.append((s.label, color, s.dashed))
    parts += _legend(legend, right, 16)
    parts.append(_text((left + right) / 2, height - 8, xlabel, "middle"))
    parts.append(_text(14, (top + base) / 2, ylabel, "middle", rot=True))
    return _doc(height, parts, alt)


def _points(s: Series) -> list[tuple[float, float]]:
    """The vertices of a series as drawn: step lines hold each value flat across its interval."""
    if s.step == "edges":  # len(xs) == len(ys) + 1: down to zero at both ends, as a histogram's outline
        out = [(s.xs[0], 0.0)]
        for i, v in enumerate(s.ys):
            out += [(s.xs[i], v), (s.xs[i + 1], v)]
        return [*out, (s.xs[len(s.ys)], 0.0)]
    if s.step == "mid" and len(s.xs) > 1:
        xs = list(s.xs)
        mids = [(a + b) / 2 for a, b in itertools.pairwise(xs)]
        edges = [xs[0] - (mids[0] - xs[0]), *mids, xs[-1] + (xs[-1] - mids[-1])]
        return _points(Series(s.label, edges, s.ys, step="edges"))
    return list(zip(s.xs, s.ys, strict=False))


__all__ = ["PALETTE", "Series", "hbars", "lines", "log_ticks", "nice_ticks", "si"]
