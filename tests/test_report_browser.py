"""The run report in a real browser (Debian's chromium, headless, over CDP): it loads with no console error, asks
for nothing on the network, has every section, shows the funnel numbers of metrics.json, is not blank, and
runs none of the scripts that hostile crawled data carries. One PNG per section is kept for a person to look at
(``MDF_REPORT_SHOTS``, default ``build/report-screenshots``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

pytest.importorskip("websocket", reason="the browser check needs websocket-client (nox -s report installs it)")

from .cdp import Browser, chromium
from .conftest import ROOT, run_mdf

BINARY = chromium()
pytestmark = pytest.mark.skipif(BINARY is None, reason="no chromium on PATH (nox -s report installs Debian's)")

SECTIONS = ["summary", "funnel", "counters", "throughput", "latency", "bottleneck", "key-state", "shards", "recipe",
            "batch-size", "projection"]  # fmt: skip
SHOTS = Path(os.environ.get("MDF_REPORT_SHOTS", ROOT / "build" / "report-screenshots"))
PAYLOADS = [
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'onerror'\">",
    "javascript:window.__pwned='js-url'",
    '"><svg onload="window.__pwned=\'svg\'">',
]


@pytest.fixture(scope="module")
def browser():
    b = Browser(BINARY)
    yield b
    b.close()


def _run(tmp: Path, recipe: dict) -> dict:
    path = tmp / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    result = run_mdf("run", "-q", str(path))
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((Path(recipe["writer"]["path"]) / "_mdf" / "metrics.json").read_text())


def _funnel_in_page(b: Browser) -> list[list[str]]:
    return b.js(
        "Array.from(document.querySelectorAll('#funnel-table tbody tr'))"
        ".map(r => Array.from(r.cells).map(c => c.textContent))"
    )


def test_demo_report_in_browser(tmp_path, browser):
    from mdf.demo_data import DemoSpec, write_dataset

    write_dataset(tmp_path / "data", DemoSpec(rows=6000))
    recipe = yaml.safe_load((ROOT / "examples" / "text.yaml").read_text())
    recipe["reader"]["paths"] = [str(tmp_path / "data" / "*.parquet")]
    recipe["stages"][0]["operators"][0]["url_filter"]["blocklist"] = str(ROOT / "examples" / "blocklist.txt")
    recipe["writer"]["path"] = str(tmp_path / "out")
    recipe["rejected"]["path"] = str(tmp_path / "rejected")
    recipe["executor"] = {"type": "inline", "batch_rows": "auto"}
    metrics = _run(tmp_path, recipe)
    report = tmp_path / "out" / "_mdf" / "report.html"
    assert report.stat().st_size < 1_500_000

    url = browser.open(report)
    assert browser.errors() == []
    assert [u for u in browser.requests() if u != url and not u.startswith("data:")] == []
    assert browser.js("Array.from(document.querySelectorAll('main > section')).map(s => s.id)") == SECTIONS
    assert browser.js("document.querySelectorAll('img.plot').length") >= 6, "plots missing"
    assert browser.js("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")

    expected = [[s["name"], op["name"], op["rows_in"], op["rows_out"], op["rows_rejected"]]
                for s in metrics["stages"] for op in s["operators"]]  # fmt: skip
    shown = [[r[0], r[1], int(r[3].replace(",", "")), int(r[4].replace(",", "")), int(r[6].replace(",", ""))]
             for r in _funnel_in_page(browser) if r[0] != "read"]  # fmt: skip
    assert shown == expected
    cards = browser.js("Array.from(document.querySelectorAll('.card b')).map(b => b.textContent)")
    assert cards[:3] == [f"{metrics['rows_read']:,}", f"{metrics['rows_written']:,}", f"{metrics['rows_rejected']:,}"]

    from PIL import Image

    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.screenshot(SHOTS / "report-top.png", {"x": 0, "y": 0, "width": 1280, "height": 900})  # the README's
    full = browser.screenshot(SHOTS / "report-full.png")
    assert len(Image.open(full).convert("RGB").getcolors(maxcolors=1 << 20) or []) > 64, "the page looks blank"
    for ident in SECTIONS:
        rect = browser.js(
            f"(() => {{ const r = document.getElementById('{ident}').getBoundingClientRect();"
            " return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}; })()"
        )
        rect["height"] = min(rect["height"], 2400)
        shot = browser.screenshot(SHOTS / f"report-{ident}.png", rect)
        assert len(Image.open(shot).convert("RGB").getcolors(maxcolors=1 << 20) or []) > 8, f"{ident} is blank"


def test_hostile_rows_never_run(tmp_path, browser):
    # three rows per drop reason (the report samples three): every payload lands in a sampled url or text
    first, last = PAYLOADS[:3], PAYLOADS[3]
    table = pa.table(
        {
            "id": [f"id-{i}" for i in range(7)],
            "url": [f"http://spam-farm.example/{p}" for p in first]
            + [f"http://ok.example/{last}"] * 3
            + ["http://ok.example/long"],
            "text": [last] * 3 + first + ["a long enough page " * 20],
        }
    )
    (tmp_path / "data").mkdir()
    pq.write_table(table, tmp_path / "data" / "hostile.parquet")
    recipe = {
        "reader": {"type": "parquet", "paths": [str(tmp_path / "data" / "*.parquet")]},
        "stages": [
            {"name": "clean", "operators": [{"url_filter": {"blocklist": str(ROOT / "examples" / "blocklist.txt")}}]},
            {"name": "length", "operators": [{"text_length_filter": {"min_length": 100}}]},
        ],
        "writer": {"type": "parquet", "path": str(tmp_path / "out")},
        "rejected": {"type": "parquet", "path": str(tmp_path / "rejected")},
        "executor": {"type": "inline", "batch_rows": 4},
    }
    metrics = _run(tmp_path, recipe)
    assert metrics["rows_rejected"] == 6
    browser.events.clear()
    url = browser.open(tmp_path / "out" / "_mdf" / "report.html")
    assert browser.js("window.__pwned === undefined")
    assert browser.errors() == []  # not even a CSP refusal: no handler or script from the data exists in the DOM
    assert [u for u in browser.requests() if u != url and not u.startswith("data:")] == []
    assert browser.js("document.scripts.length") == 1
    assert browser.js("document.querySelectorAll('[onerror],[onload],svg,iframe,a[href^=javascript]').length") == 0
    text = browser.js("document.body.innerText")
    for p in PAYLOADS:
        assert p[:40] in text, f"payload not shown as text: {p}"
