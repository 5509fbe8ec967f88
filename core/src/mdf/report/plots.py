"""The report's plots: matplotlib figures saved as SVG and embedded as ``<img src="data:image/svg+xml;...">``.

Why matplotlib to SVG: it is the plotting library every Python data user already trusts, it needs no
JavaScript in the page (the numbers stay readable with scripts off and nothing can call out), its SVG is
small (text kept as text, ``svg.fonttype: none``) and scales on any screen. Embedding each SVG as an
*image* rather than inline markup means nothing in a plot (a stage name, a reason) is ever parsed as the
page's HTML, and an SVG loaded as an image cannot run scripts whatever it contains.

matplotlib is optional (``pip install "mdf-core[report]"``): without it :func:`available` is false and the
report shows its tables alone.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Sequence
from typing import Any

from mdf.recording import LATENCY_EDGES_S

WIDTH_IN = 11.0  # at 72 pt/in the SVG is ~800 px wide, about the size it is shown at: fonts stay readable
PALETTE = ["#2563eb", "#f97316", "#16a34a", "#dc2626", "#9333ea", "#0891b2", "#ca8a04", "#db2777"]


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


_STYLE = {
    "svg.fonttype": "none",  # text as <text>: small, selectable, the browser's own font
    "svg.hashsalt": "mdf",  # stable ids: the same run gives the same page
    "text.parse_math": False,  # a '$' in a stage or reason name is text, not TeX
    "font.family": "sans-serif",
    "font.size": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e5e7eb",
}


def _figure(width: float, height: float) -> tuple[Any, Any]:
    """A figure without pyplot (no GUI backend is resolved, no global figure list): faster to import and safe
    in threads and Ray workers."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots()


def _img(fig: Any, alt: str) -> tuple[str, str]:
    """``(data URI, alt text)`` of a figure."""
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii"), alt


def _si(value: float, _pos: Any = None) -> str:
    """1K, 2.5M: tick labels as plain text (math text is off so data names never parse as TeX)."""
    for unit, n in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= n:
            return f"{value / n:g}{unit}"
    return f"{value:g}"


def _log_axis(axis: Any, base: int = 10) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=base))
    axis.set_major_formatter(FuncFormatter(_si))
    axis.set_minor_formatter(NullFormatter())


def _short(name: str, n: int = 28) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"


def funnel(operators: Sequence[tuple[str, int, int]]) -> tuple[str, str]:
    """Horizontal bars: rows in (light) and rows out (dark) per operator, in pipeline order."""
    fig, ax = _figure(WIDTH_IN, 0.36 * len(operators) + 0.9)
    names = [_short(n) for n, _, _ in operators][::-1]
    rows_in = [i for _, i, _ in operators][::-1]
    rows_out = [o for _, _, o in operators][::-1]
    ax.barh(names, rows_in, color="#bfdbfe", label="rows in")
    ax.barh(names, rows_out, color=PALETTE[0], height=0.5, label="rows out")
    ax.set_xlabel("rows")
    ax.xaxis.set_major_formatter(_si)
    ax.legend(loc="lower right", frameon=False)
    ax.grid(axis="y", visible=False)
    return _img(fig, "rows in and out per operator")


def throughput(seconds: Sequence[float], series: dict[str, Sequence[float]]) -> tuple[str, str]:
    """Rows/s per stage over the run (one line each), from the recorded time buckets."""
    fig, ax = _figure(WIDTH_IN, 3.4)
    for name, values in series.items():
        style = (
            {"color": "#6b7280", "linestyle": "--", "linewidth": 1.2} if name.startswith("(") else {"linewidth": 1.8}
        )
        ax.plot(seconds, values, label=_short(name), drawstyle="steps-mid", **style)
    ax.set_xlabel("seconds since the run started")
    ax.set_ylabel("rows/s into the stage")
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(_si)
    ax.legend(frameon=False, fontsize=10, ncols=min(4, max(1, len(series))))
    return _img(fig, "rows per second into each stage over time")


def latency(histograms: dict[str, Sequence[int]]) -> tuple[str, str]:
    """Batch latency per operator: counts per (doubling) latency bin, one step line per operator."""
    fig, ax = _figure(WIDTH_IN, 3.4)
    edges = [0.0, *LATENCY_EDGES_S]
    used = [i for h in histograms.values() for i, c in enumerate(h) if c]
    lo, hi = (min(used), max(used) + 1) if used else (0, 1)
    for name, counts in histograms.items():
        xs = [max(edges[i], LATENCY_EDGES_S[0] / 2) for i in range(lo, hi + 1)]
        ax.stairs(list(counts[lo:hi]), xs, label=_short(name), linewidth=1.6)
    ax.set_xscale("log")
    _log_axis(ax.xaxis)
    ax.xaxis.set_major_formatter(lambda v, _p: f"{v * 1e3:g} ms" if v < 1 else f"{v:g} s")
    ax.set_xlabel("batch latency")
    ax.set_ylabel("batches")
    ax.legend(frameon=False, fontsize=10)
    return _img(fig, "histogram of batch latency per operator")


def bars(labels: Sequence[str], values: Sequence[float], xlabel: str, alt: str, limit: float | None = None):
    """One horizontal bar per label (replica utilisation, per-stage CPU cost)."""
    fig, ax = _figure(WIDTH_IN, 0.3 * len(labels) + 0.9)
    ax.barh([_short(n, 36) for n in labels][::-1], list(values)[::-1], color=PALETTE[1])
    if limit is not None:
        ax.set_xlim(0, limit)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    return _img(fig, alt)


def growth(seconds: Sequence[float], series: dict[str, Sequence[float]], ylabel: str) -> tuple[str, str]:
    """Key-state size over time (estimated from the rows each deduplicator kept)."""
    fig, ax = _figure(WIDTH_IN, 3.0)
    for name, values in series.items():
        ax.plot(seconds, values, label=_short(name, 40), linewidth=1.8)
    ax.set_xlabel("seconds since the run started")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.legend(frameon=False, fontsize=10)
    return _img(fig, "key-state size over time")


def scaling(cpus: Sequence[int], rows_per_s: Sequence[float], seed: Sequence[tuple[int, float]]) -> tuple[str, str]:
    """Projected rows/s against cluster CPUs (log-log), with the seed's figures where the recipe matches."""
    fig, ax = _figure(WIDTH_IN, 3.4)
    ax.plot(cpus, rows_per_s, marker="o", label="mdf projection (this run)", linewidth=1.8)
    if seed:
        ax.plot([c for c, _ in seed], [r for _, r in seed], marker="s", linestyle="--", label="seed's table")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(list(cpus), [f"{c:,}" for c in cpus])
    ax.xaxis.set_minor_formatter("")
    _log_axis(ax.yaxis)
    ax.set_xlabel("cluster CPUs")
    ax.set_ylabel("rows/s")
    ax.legend(frameon=False)
    return _img(fig, "projected throughput against cluster size")


def safely(make: Callable[..., tuple[str, str]], *args: Any) -> tuple[str, str] | None:
    """A plot, or None when matplotlib is absent (the section's table carries the numbers)."""
    if not available():
        return None
    import matplotlib

    # the style applies to the report's figures only: a program that calls mdf keeps its own rcParams
    with matplotlib.rc_context({**_STYLE, "axes.prop_cycle": matplotlib.cycler(color=PALETTE)}):
        return make(*args)
