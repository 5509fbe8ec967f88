"""The report's SVG chart writer (:mod:`mdf.report.svg`): valid XML, bars and lines where the numbers put them,
round ticks, log axes, and data names kept as text."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET

import pytest

from mdf.report import plots, svg
from mdf.report.svg import Series

NS = {"s": "http://www.w3.org/2000/svg"}
HOSTILE = "<script>alert(1)</script>&\"'"


def _parse(doc: str) -> ET.Element:
    return ET.fromstring(doc)  # raises on anything that is not well-formed XML


def _texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iterfind(".//s:text", NS)]


@pytest.mark.parametrize(
    ("lo", "hi", "step"), [(0, 1, 0.2), (0, 97, 20), (0, 1234, 250), (0, 2e6, 5e5), (0.5, 7.5, 2), (0, 100, 20)]
)
def test_nice_ticks_are_round_and_cover_the_range(lo, hi, step):
    ticks = svg.nice_ticks(lo, hi)
    assert ticks[0] <= lo and ticks[-1] >= hi and 3 <= len(ticks) <= 8
    assert all(b - a == pytest.approx(step) for a, b in itertools.pairwise(ticks))


def test_nice_ticks_of_an_empty_or_odd_range():
    assert svg.nice_ticks(0, 0)[-1] > 0
    assert svg.nice_ticks(float("nan"), 1) == [0.0, 1.0]
    assert svg.log_ticks(0.003, 20) == [0.001, 0.01, 0.1, 1.0, 10.0, 100.0]


def test_si_labels():
    assert [svg.si(v) for v in (0, 950, 1500, 2e6, 3e9)] == ["0", "950", "1.5K", "2M", "3B"]


def test_bars_are_as_long_as_their_values():
    """Two overlaid series: rows out drawn inside rows in, each bar's width proportional to its value."""
    doc = svg.hbars(["a", "b"], [("in", [100, 50], "#111", 1.0), ("out", [80, 0], "#222", 0.5)], "rows", "alt")
    rects = _parse(doc).findall(".//s:rect", NS)[1:]  # the first is the background
    widths = [float(r.get("width")) for r in rects]
    assert len(widths) == 4 and widths[1] == pytest.approx(widths[0] / 2, abs=0.2) and widths[3] == 0
    assert widths[2] == pytest.approx(widths[0] * 0.8, abs=0.2)
    assert float(rects[2].get("height")) < float(rects[0].get("height"))
    assert {"a", "b", "rows", "in", "out", "0", "100"} <= set(_texts(_parse(doc)))


def test_bars_honour_a_fixed_limit():
    doc = svg.hbars(["x"], [("", [50], "#111", 1.0)], "%", "alt", xmax=100)
    texts = _texts(_parse(doc))
    assert "100" in texts and "120" not in texts


def test_step_lines_hold_each_value_across_its_bucket():
    pts = svg._points(Series("s", [0.5, 1.5, 2.5], [10, 20, 30], step="mid"))
    assert pts == [(0.0, 0.0), (0.0, 10), (1.0, 10), (1.0, 20), (2.0, 20), (2.0, 30), (3.0, 30), (3.0, 0.0)]
    doc = svg.lines([Series("a", [0.5, 1.5, 2.5], [10, 20, 30], step="mid"), Series("b", [0, 3], [5, 5])],
                    "seconds", "rows/s", "alt")  # fmt: skip
    root = _parse(doc)
    lines = root.findall(".//s:polyline", NS)[1:]  # the first is the axes
    assert len(lines) == 2 and len(lines[0].get("points").split()) == 8
    assert {"a", "b", "seconds", "rows/s", "0", "30"} <= set(_texts(root))


def test_log_axes_tick_powers_and_drop_what_they_cannot_show():
    doc = svg.lines([Series("p", [1, 8, 64], [0, 1e3, 1e5], marker=True)], "cpus", "rows/s", "alt", xlog=True,
                    ylog=True, xticks=[(1, "1"), (8, "8"), (64, "64")])  # fmt: skip
    root = _parse(doc)
    assert {"1K", "10K", "100K", "1", "8", "64"} <= set(_texts(root))
    assert len(root.findall(".//s:circle", NS)) == 2  # the zero has no place on a log axis


def test_names_from_the_data_stay_text():
    doc = svg.hbars([HOSTILE], [("", [1], "#111", 1.0)], HOSTILE, HOSTILE)
    root = _parse(doc)
    assert HOSTILE in _texts(root) and root.find(".//s:script", NS) is None
    doc = svg.lines([Series(HOSTILE, [0, 1], [1, 2])], HOSTILE, HOSTILE, HOSTILE)
    assert _texts(_parse(doc)).count(HOSTILE) == 3


def test_every_report_plot_draws_valid_svg():
    """What the report calls, with the shapes sections.py gives, including an empty-ish run."""
    import base64

    made = [
        plots.funnel([("s/a", 1000, 900), ("s/b", 900, 10)]),
        plots.throughput([0.25, 0.75], {"s": [100.0, 50.0], "(finished)": [90.0, 40.0]}),
        plots.throughput([0.25], {"s": [0.0]}),
        plots.latency({"s/a": [0, 3, 5, 0, 1], "s/b": [0, 0, 0, 0, 0, 2]}),
        plots.bars(["s #0", "s #1"], [40.0, 90.0], "busy %", "alt", 100),
        plots.growth([1.0, 2.0], {"ns": [0.5, 1.0]}, "MiB"),
        plots.scaling([1, 2, 4, 8], [1e3, 2e3, 4e3, 7e3], [(1, 900.0), (8, 6000.0)]),
    ]
    for uri, alt in made:
        assert uri.startswith("data:image/svg+xml;base64,") and alt
        _parse(base64.b64decode(uri.split(",", 1)[1]).decode())
