"""The page around the sections: one HTML file with its style and script inline, locked by a CSP.

Escaping is structural, not remembered: every fragment is a ``markupsafe.Markup`` built with
``Markup(template).format(...)``, which escapes each argument that is not already ``Markup``; text from the
data (reasons, URLs, sample rows) therefore reaches the page only as text. The Content-Security-Policy allows
only this page's own style and script, by their SHA-256 hashes, images only as ``data:`` URIs (the SVG plots),
and nothing else (no fetch, no frame, no form, no base URL), so even markup that slipped through could
neither run nor call out.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from markupsafe import Markup, escape

STYLE = """
:root{--ink:#111827;--muted:#6b7280;--line:#e5e7eb;--bg:#f9fafb;--accent:#2563eb;--bad:#b91c1c}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);margin:0;background:#fff}
header{background:#111827;color:#fff;padding:18px 32px}
header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#d1d5db}
nav{position:sticky;top:0;background:#fff;border-bottom:1px solid var(--line);padding:8px 32px;z-index:1}
nav a{margin-right:14px;color:var(--accent);text-decoration:none;font-size:13px}
main{padding:8px 32px 48px;max-width:1320px}
section{padding:14px 0;border-bottom:1px solid var(--line)}
h2{font-size:17px;margin:8px 0 10px}
h3{font-size:14px;margin:14px 0 6px}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:10px 14px;min-width:150px}
.card b{display:block;font-size:20px}
.card span{color:var(--muted);font-size:12px}
table{border-collapse:collapse;margin:6px 0;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:4px 10px;text-align:left;vertical-align:top}
th{background:var(--bg);font-weight:600;cursor:default}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.sortable th{cursor:pointer}
.scroll{max-height:420px;overflow:auto;border:1px solid var(--line)}
.sample td{font-family:ui-monospace,Menlo,monospace;font-size:12px;max-width:420px;word-break:break-all}
img.plot{width:100%;max-width:860px;height:auto;display:block;margin:6px 0}
.side{display:flex;flex-wrap:wrap;gap:28px;align-items:flex-start}
pre{background:var(--bg);border:1px solid var(--line);padding:10px;overflow:auto;font-size:12px}
.muted{color:var(--muted)}
.bad{color:var(--bad);font-weight:600}
.ok{color:#15803d;font-weight:600}
ul.assume{margin:4px 0;padding-left:20px;color:var(--muted);font-size:13px}
"""

# Sort a table by a header click: numbers by value, text by text. The page reads the same without it.
SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (t) {
  t.querySelectorAll('th').forEach(function (th, i) {
    th.addEventListener('click', function () {
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var dir = th.dataset.dir === 'asc' ? -1 : 1; th.dataset.dir = dir === 1 ? 'asc' : 'desc';
      var key = function (r) { var s = r.cells[i].dataset.v || r.cells[i].textContent;
        var n = parseFloat(s.replace(/,/g, '')); return isNaN(n) ? s : n; };
      rows.sort(function (a, b) { var x = key(a), y = key(b); return (x > y ? 1 : x < y ? -1 : 0) * dir; });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def csp() -> str:
    return (
        f"default-src 'none'; style-src '{_sha256(STYLE)}'; script-src '{_sha256(SCRIPT)}'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def num(value: float | int, digits: int = 0) -> Markup:
    """A right-aligned number cell with its raw value for sorting."""
    text = f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"
    if text.startswith("-0") and not text.strip("-0.,"):
        text = text[1:]
    return Markup('<td class="n" data-v="{}">{}</td>').format(value, text)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], cls: str = "", numeric: Sequence[int] = ()) -> Markup:
    """A table; a cell is text (escaped), a number (right-aligned), or a ``<td>`` Markup from :func:`num`."""
    head = Markup("").join(
        Markup('<th class="{}">{}</th>').format("n" if i in numeric else "", h) for i, h in enumerate(headers)
    )
    body = []
    for row in rows:
        cells = []
        for cell in row:
            if isinstance(cell, Markup) and cell.startswith("<td"):
                cells.append(cell)
            elif isinstance(cell, int | float) and not isinstance(cell, bool):
                cells.append(num(cell, 0 if isinstance(cell, int) or abs(cell) >= 100 else 2))
            else:
                cells.append(Markup("<td>{}</td>").format(cell))
        body.append(Markup("<tr>{}</tr>").format(Markup("").join(cells)))
    return Markup('<table class="{}"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>').format(
        cls, head, Markup("\n").join(body)
    )


def plot(img: tuple[str, str] | None) -> Markup:
    """A plot as an image, or a note that it could not be drawn (the tables carry the numbers)."""
    if img is None:
        return Markup('<p class="muted">(this plot could not be drawn: the table has the numbers)</p>')
    uri, alt = img
    return Markup('<img class="plot" alt="{}" src="{}">').format(alt, uri)


def section(ident: str, title: str, *body: Markup | str) -> Markup:
    inner = Markup("\n").join(b if isinstance(b, Markup) else Markup("<p>{}</p>").format(b) for b in body)
    return Markup('<section id="{}"><h2>{}</h2>\n{}</section>').format(ident, title, inner)


def page(title: str, subtitle: str, sections: list[tuple[str, str, Markup]]) -> str:
    """The whole document: header, a link bar to every section, the sections, inline style and script."""
    nav = Markup("").join(Markup('<a href="#{}">{}</a>').format(i, t) for i, t, _ in sections)
    doc = Markup(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        "<title>{title}</title>\n<style>{style}</style></head>\n<body>\n"
        "<header><h1>{title}</h1><p>{subtitle}</p></header>\n<nav>{nav}</nav>\n<main>\n{body}\n</main>\n"
        "<script>{script}</script>\n</body></html>\n"
    ).format(
        csp=csp(),
        title=title,
        subtitle=subtitle,
        style=Markup(STYLE),
        nav=nav,
        body=Markup("\n").join(s for _, _, s in sections),
        script=Markup(SCRIPT),
    )
    return str(doc)


__all__ = ["Markup", "escape", "num", "page", "plot", "section", "table"]
