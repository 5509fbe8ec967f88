"""The two scores: trafilatura's snippet metric (``trafeval``) and token P/R/F1 against a reference text.

Snippets, as trafilatura's ``tests/eval_common.py`` counts them: whitespace runs become one space in the output
and in each snippet; a ``with`` snippet found in the output is a true positive, else a false negative; a
``without`` snippet found is a false positive. Counts are pooled over all snippets of all pages of a group, so
P/R/F1 of a group are those of its summed counts (a crash or empty output finds no snippet).

Tokens, as ``bench_html_extract.py`` scores the AEB: ``\\w+`` matches compared as bags, P/R/F1 per page,
macro-averaged (an empty extraction scores 0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bench_html_extract import prf as token_prf  # bag-of-words P/R/F1, as bench_html_extract scores

from .data import Page

SPACE = re.compile(r"\s+")


def norm(text: str) -> str:
    return SPACE.sub(" ", text).strip()


@dataclass
class Counts:
    """Pooled snippet counts, or summed per-page token scores (``pages`` of them)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    p: float = 0.0
    r: float = 0.0
    f: float = 0.0
    pages: int = 0

    def add(self, other: Counts) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.p += other.p
        self.r += other.r
        self.f += other.f
        self.pages += other.pages

    def snippet_prf(self) -> tuple[float, float, float]:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f = 2 * self.tp / (2 * self.tp + self.fp + self.fn) if self.tp + self.fp + self.fn else 0.0
        return p, r, f

    def token_prf(self) -> tuple[float, float, float]:
        n = self.pages or 1
        return self.p / n, self.r / n, self.f / n

    def prf(self, kind: str) -> tuple[float, float, float]:
        return self.snippet_prf() if kind == "snippet" else self.token_prf()


def metric(page: Page) -> str:
    return "snippet" if page.set == "trafeval" else "token"


def score(page: Page, text: str | None) -> Counts:
    """One page's counts for ``text`` (``None``: the extractor failed on it)."""
    if page.set == "trafeval":
        out = norm(text or "")
        tp = sum(1 for w in page.with_ if norm(w) in out)
        fp = sum(1 for w in page.without if norm(w) in out)
        return Counts(tp=tp, fp=fp, fn=len(page.with_) - tp, pages=1)
    p, r, f = token_prf(text or "", page.gold)
    return Counts(p=p, r=r, f=f, pages=1)


def page_f1(page: Page, text: str | None) -> float:
    """A single page's F1 in its set's metric (for ranking pages, not for the totals)."""
    c = score(page, text)
    return c.prf(metric(page))[2]
