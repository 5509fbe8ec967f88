"""Tables of the quality benchmark: totals per set, breakdowns by language and page kind, the worst pages."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from .data import Page
from .scoring import Counts, metric, page_f1, score

Texts = dict[str, list[str | None]]  # extractor label -> text per page (aligned with the page list)


def totals(pages: list[Page], texts: list[str | None], group: Callable[[Page], str]) -> dict[str, Counts]:
    out: dict[str, Counts] = defaultdict(Counts)
    for page, text in zip(pages, texts, strict=True):
        out[group(page)].add(score(page, text))
    return out


def set_table(pages: list[Page], runs: Texts, set_name: str) -> list[str]:
    idx = [i for i, p in enumerate(pages) if p.set == set_name]
    if not idx:
        return []
    sub = [pages[i] for i in idx]
    kind = metric(sub[0])
    what = "snippet P/R/F1 pooled" if kind == "snippet" else "token P/R/F1 macro-averaged"
    lines = [f"{set_name}: {len(sub)} pages, {len({p.domain for p in sub})} sites, {what}"]
    lines.append(
        f"  {'extractor':<24} {'P':>6} {'R':>6} {'F1':>6}" + ("   tp    fn    fp" if kind == "snippet" else "")
    )
    for label, texts in runs.items():
        c = totals(sub, [texts[i] for i in idx], lambda p: "all")["all"]
        p, r, f = c.prf(kind)
        extra = f" {c.tp:5d} {c.fn:5d} {c.fp:5d}" if kind == "snippet" else ""
        lines.append(f"  {label:<24} {p:6.3f} {r:6.3f} {f:6.3f}{extra}")
    return lines


def breakdown(pages: list[Page], runs: Texts, set_name: str, by: str, min_pages: int = 3) -> list[str]:
    """F1 of every extractor per group (``by``: lang, kind or markup); groups under ``min_pages`` pooled as ``rest``."""
    idx = [i for i, p in enumerate(pages) if p.set == set_name]
    if not idx:
        return []
    sub = [pages[i] for i in idx]
    sizes: dict[str, int] = defaultdict(int)
    for p in sub:
        sizes[getattr(p, by)] += 1

    def group(p: Page) -> str:
        g = getattr(p, by)
        return g if sizes[g] >= min_pages else "rest"

    order = sorted({group(p) for p in sub}, key=lambda g: (g == "rest", -sum(group(p) == g for p in sub)))
    kind = metric(sub[0])
    labels = list(runs)
    width = max(12, *(len(label) + 1 for label in labels))
    lines = [f"{set_name} F1 by {by}:"]
    lines.append(f"  {by:<10} {'pages':>5} " + "".join(f"{label:>{width}}" for label in labels))
    per_run = {label: totals(sub, [runs[label][i] for i in idx], group) for label in labels}
    for g in order:
        n = sum(group(p) == g for p in sub)
        row = "".join(f"{per_run[label][g].prf(kind)[2]:{width}.3f}" for label in labels)
        lines.append(f"  {g:<10} {n:5d} {row}")
    return lines


def worst(pages: list[Page], runs: Texts, mine: str, peer: str, n: int) -> list[str]:
    """The ``n`` pages where ``mine`` trails ``peer`` most (per-page F1 in the page's own metric)."""
    if mine not in runs or peer not in runs:
        return []
    rows = []
    for i, page in enumerate(pages):
        a, b = page_f1(page, runs[mine][i]), page_f1(page, runs[peer][i])
        rows.append((a - b, a, b, page, score(page, runs[mine][i]), score(page, runs[peer][i])))
    rows.sort(key=lambda r: r[0])
    lines = [f"{n} pages where {mine} trails {peer} most (page F1; snippet pages: tp/fn/fp):"]
    for delta, a, b, page, ca, cb in rows[:n]:
        counts = f"  {ca.tp}/{ca.fn}/{ca.fp} vs {cb.tp}/{cb.fn}/{cb.fp}" if page.set == "trafeval" else ""
        lines.append(
            f"  {delta:+.2f}  {a:.2f} vs {b:.2f}  {page.set:<11} {page.lang:<3} {page.kind:<8} {page.id[:70]}{counts}"
        )
    return lines
