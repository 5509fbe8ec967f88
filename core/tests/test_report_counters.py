"""The report's "Operator counters" section: an operator's own counts, grouped, histograms in bin order."""

from __future__ import annotations

import re

from mdf.metrics import OperatorMetrics, RunMetrics, StageMetrics
from mdf.report.build import render
from mdf.report.counters import counters


def _metrics() -> RunMetrics:
    op = OperatorMetrics("tokenize", "refiner", rows_in=10, rows_out=10)
    # counted in the order a worker met them: bins out of order, as merged counters come
    counted = [("tokens", 5000), ("doc_tokens/<=1024", 3), ("doc_tokens/>65536", 1), ("doc_tokens/<=8", 4),
               ("doc_tokens/<=0", 2), ("tokens_by_source/code", 1500), ("tokens_by_source/web", 3500)]  # fmt: skip
    for name, n in counted:
        op.count(name, n)
    return RunMetrics(executor="inline", wall_s=2.0, stages=[StageMetrics("tok", [op])])


def test_counters_are_tables_with_rates_shares_and_histograms_in_bin_order():
    """Seen red with the bins left in the order counted (<=1024 before <=8)."""
    page = str(counters(_metrics()))
    assert "tok/tokenize" in page
    assert re.search(r"tokens</td><td class=\"n\" data-v=\"5000\">5,000</td><td class=\"n\" data-v=\"2500.0\">", page)
    bins = re.findall(r"<td>(&lt;=\d+|&gt;\d+)</td>", page)
    assert bins == ["&lt;=0", "&lt;=8", "&lt;=1024", "&gt;65536"]
    web = page.index("<td>web</td>")
    assert web < page.index("<td>code</td>")  # the largest share first
    assert 'data-v="70.0"' in page[web:]
    assert "histogram of doc_tokens" in page


def test_the_page_has_the_section_and_says_so_when_nothing_was_counted():
    page = render(_metrics())
    assert '<section id="counters">' in page
    empty = RunMetrics(executor="inline", stages=[StageMetrics("s", [OperatorMetrics("noop", "refiner")])])
    assert "no operator counted anything beyond rows" in str(counters(empty))
