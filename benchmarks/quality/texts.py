"""The benchmark's texts: real extracted web text, a generated CommonCrawl-like set, and texts built to sit on
each rule's threshold. Runs in the DataTrove venv (resiliparse extracts the AEB pages)."""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
AEB = ROOT.parent / "shared" / "data" / "aeb"
PAGES = ROOT.parent / "shared" / "data"  # readability-pages/*/source.html, trafeval-dev/tests/{eval,cache}/*.html

BOILERPLATE = [
    "Home | About | Contact",
    "Privacy Policy",
    "This website uses cookies to improve your experience.",
    "By using this site you agree to our Terms of Use.",
    "Share on Facebook",
    "Tweet",
    "Copyright © 2024 Example Media. All rights reserved.",
    "Read more...",
    "Please enable JavaScript to view the comments.",
    "Subscribe to our newsletter!",
    "• Sports",
    "• Politics",
    "- Weather",
    "Related posts:",
    "Posted by admin at 10:42 AM",
    "Tags: news, world, politics",
    "Click here to learn more…",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
    "function init() { return window.dataLayer || []; }",
    "See the discussion[1] and the notes[citation needed].",
    "#breaking #news #today",
    "Loading...",
]


def real_texts() -> list[tuple[str, str]]:
    """articleBody of the 181 AEB pages, plus resiliparse's main-content and all-text extraction of each."""
    if not AEB.is_dir():
        sys.exit(f"{AEB} is missing: the benchmark reads the AEB pages of ../shared/data in place")
    from resiliparse.extract.html2text import extract_plain_text

    truth = json.loads((AEB / "ground-truth.json").read_text())
    out = []
    for pid, rec in sorted(truth.items()):
        out.append(("aeb_body", rec["articleBody"]))
        html = gzip.decompress((AEB / "html" / f"{pid}.html.gz").read_bytes()).decode("utf-8", "replace")
        out.append(("aeb_main", extract_plain_text(html, main_content=True)))
        out.append(("aeb_all", extract_plain_text(html, main_content=False)))
    return out


def more_real_texts() -> list[tuple[str, str]]:
    """resiliparse's main-content and all-text extraction of the other real pages of ``../shared/data``: the 130
    Readability test pages and the 506 trafilatura evaluation pages (many languages and site kinds)."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    pages = sorted(PAGES.glob("readability-pages/*/source.html"))
    pages += sorted(PAGES.glob("trafeval-dev/tests/eval/*.html")) + sorted(
        PAGES.glob("trafeval-dev/tests/cache/*.html")
    )
    out = []
    for page in pages:
        raw = page.read_bytes()
        html = bytes_to_str(raw, detect_encoding(raw))
        kind = "readability" if "readability-pages" in str(page) else "trafeval"
        out.append((f"{kind}_main", extract_plain_text(html, main_content=True)))
        out.append((f"{kind}_all", extract_plain_text(html, main_content=False)))
    return out


def generated(bodies: list[str], n: int, rng: random.Random) -> list[tuple[str, str]]:
    """CommonCrawl-like pages: article paragraphs mixed with navigation, cookie and share lines, repeats."""
    paras = [p for b in bodies for p in b.split("\n") if p.strip()]
    out = []
    for _ in range(n):
        lines: list[str] = []
        for _ in range(rng.randint(0, 8)):
            lines.append(rng.choice(BOILERPLATE))
        for _ in range(rng.randint(0, 12)):
            p = rng.choice(paras)
            if rng.random() < 0.15:
                p = p[: rng.randint(1, max(1, len(p)))]
            lines.append(p)
            if rng.random() < 0.2:
                lines.append(rng.choice(BOILERPLATE))
        if rng.random() < 0.15:
            lines += lines[: rng.randint(1, max(1, len(lines)))]  # repeated block
        if rng.random() < 0.1:
            lines = [f"- {x}" for x in lines]
        sep = rng.choice(["\n", "\n", "\n\n", "\n \n"])
        out.append(("generated", sep.join(lines)))
    return out


def edges(rng: random.Random) -> list[tuple[str, str]]:
    """Texts on each rule's threshold (and either side of it), and the bad inputs."""
    word = [
        "the",
        "quick",
        "brown",
        "fox",
        "jumps",
        "over",
        "lazy",
        "dog",
        "with",
        "that",
        "and",
        "have",
        "to",
        "be",
        "of",
    ]
    out = []
    for n in (48, 49, 50, 51, 52):  # gopher_short_doc
        out.append(("edge_words", " ".join(rng.choice(word) for _ in range(n)) + "."))
    for k in range(8):  # mean word length near 3 and 10
        short = " ".join(rng.choice(["a", "an", "to", "the", "of", "cat"]) for _ in range(60 + k))
        out.append(("edge_avglen", short + " with that."))
        long = " ".join(rng.choice(["internationalization", "the", "with", "characteristically"]) for _ in range(60))
        out.append(("edge_avglen", long + "."))
    for h in range(4, 9):  # hashes and ellipses per word near 0.1
        base = " ".join(rng.choice(word) for _ in range(60))
        out.append(("edge_hash", base + " #tag" * h))
        out.append(("edge_ellipsis", base + " wait..." * h + " then…" * (h // 2)))
    for b in range(7, 12):  # bullet and end-ellipsis lines
        lines = [f"• {' '.join(rng.choice(word) for _ in range(8))}" for _ in range(b)]
        lines += [" ".join(rng.choice(word) for _ in range(8)) + "." for _ in range(10 - min(b, 10))]
        out.append(("edge_bullets", "\n".join(lines)))
        lines = [" ".join(rng.choice(word) for _ in range(8)) + ("..." if i < b - 4 else ".") for i in range(14)]
        out.append(("edge_end_ellipsis", "\n".join(lines)))
    for d in range(2, 7):  # duplicate lines / paragraphs near 0.3 and 0.2
        uniq = [" ".join(rng.choice(word) for _ in range(10)) + "." for _ in range(10)]
        out.append(("edge_dup_lines", "\n".join(uniq + uniq[:d])))
        out.append(("edge_dup_paras", "\n\n".join(uniq + uniq[:d])))
    for r in range(5):  # repeated n-grams
        base = [" ".join(rng.choice(word) for _ in range(12)) + "." for _ in range(8)]
        rep = " ".join(["buy cheap watches online now"] * (r + 1))
        out.append(("edge_ngrams", " ".join(base) + " " + rep))
    for s in range(3, 8):  # C4: sentences left near 5, terminal punctuation, words per line
        lines = [f"Sentence number {i} is here." for i in range(s)] + ["no end mark here", "Two words."]
        out.append(("edge_c4", "\n".join(lines)))
    for p in range(8):  # FineWeb: punctuated lines near 0.12, short lines near 0.67, list ratio
        lines = [" ".join(rng.choice(word) for _ in range(9)) + ("." if i < p else "") for i in range(16)]
        out.append(("edge_fineweb", "\n".join(lines)))
        lines = ["Short line." if i < 10 + p else " ".join(rng.choice(word) for _ in range(9)) + "." for i in range(25)]
        out.append(("edge_fineweb", "\n".join(lines)))
    out += [
        ("bad", ""),
        ("bad", "   \n\n  "),
        ("bad", "!!! ... ??? ,,, ;;; ### ---"),
        ("bad", "a" * 1_000_000),
        ("bad", "\u00e9" * 50_000 + " \u4e2d\u6587 " * 100),
        ("bad", "The [1] cat [edit] sat [citation needed]. " * 20),
        ("bad", "{" + "x " * 100),
        ("bad", "\ufffd\ufffd broken \ufffd bytes " * 40),
    ]
    return out


def build(path: Path, n_generated: int) -> None:
    """``n_generated`` >= 0: the filter benchmark's set (AEB texts, generated pages, edges); -1: every real text
    (the AEB's three and the other pages' two extractions), the quality chain's set in ``bench_peers.py``."""
    rng = random.Random(15)
    real = real_texts()
    if n_generated < 0:
        rows = real + more_real_texts()
    else:
        rows = real + generated([t for s, t in real if s == "aeb_body"], n_generated, rng) + edges(rng)
    table = pa.table(
        {
            "id": [f"{i:05d}" for i in range(len(rows))],
            "source": [s for s, _ in rows],
            "text": [t for _, t in rows],
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


if __name__ == "__main__":
    build(Path(sys.argv[1]), int(sys.argv[2]))
