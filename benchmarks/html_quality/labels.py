"""Labels of the kernel's units from the reference of each page: 1 main text, 0 boilerplate, -1 unknown.

``trafeval`` pages have snippets, not a full reference: the units a ``with`` snippet falls on are main text, the
units a ``without`` snippet falls on are boilerplate, every other unit is unknown (left out of training). A
snippet is found in the page's units joined by spaces (whitespace normalised, as the metric compares), so one
that spans several units labels each of them.

``aeb`` and ``readability`` pages have the whole main text: a unit is main text when most of its characters are
in pieces (sentences, or the parts between separators) found in the reference, boilerplate when few are, and
unknown in between (a paragraph the reference cut in two). Pieces shorter than 20 characters must be found as
whole words, so ``Home`` is not found inside ``Homeless``.
"""

from __future__ import annotations

import re

from .data import Page
from .scoring import norm

PIECES = re.compile(r"(?<=[.!?:;])\s+|\s*[|•·»]\s*|\n+")


def snippet_labels(page: Page, texts: list[str]) -> list[int]:
    """Labels from ``with``/``without`` snippets; a unit both kinds fall on is unknown."""
    normed = [norm(t) for t in texts]
    starts, pos = [], 0
    for t in normed:
        starts.append(pos)
        pos += len(t) + 1
    joined = " ".join(normed)
    hit: list[set[int]] = [set() for _ in texts]

    def mark(snippet: str, label: int) -> None:
        s = norm(snippet)
        at = joined.find(s)
        while s and at >= 0:
            end = at + len(s)
            for u, start in enumerate(starts):
                if start < end and at < start + len(normed[u]):
                    hit[u].add(label)
            at = joined.find(s, at + 1)

    for w in page.with_:
        mark(w, 1)
    for w in page.without:
        mark(w, 0)
    return [next(iter(h)) if len(h) == 1 else -1 for h in hit]


def _found(piece: str, gold: str) -> bool:
    if len(piece) >= 20:
        return piece in gold
    return re.search(r"(?<!\w)" + re.escape(piece) + r"(?!\w)", gold) is not None


def reference_labels(page: Page, texts: list[str], high: float = 0.7, low: float = 0.3) -> list[int]:
    """Labels from a whole reference text (``page.gold``)."""
    gold = norm(page.gold)
    out = []
    for t in texts:
        pieces = [norm(p) for p in PIECES.split(t)]
        pieces = [p for p in pieces if p]
        total = sum(len(p) for p in pieces)
        if not total:
            out.append(-1)
            continue
        found = sum(len(p) for p in pieces if _found(p, gold)) / total
        out.append(1 if found >= high else 0 if found <= low else -1)
    return out


def labels(page: Page, texts: list[str]) -> list[int]:
    return snippet_labels(page, texts) if page.set == "trafeval" else reference_labels(page, texts)
