"""HTML extraction recall on pages mdf was not tuned on: ``readability-pages`` next to the AEB, each favor mode.

Why a second set: ``html_extract``'s rules were fitted on the AEB (181 English news pages); on other layouts
(forums, docs, wikis, blogs, right-to-left and non-English pages) it dropped main text that other extractors
keep (issue 26). ``../shared/data/readability-pages/`` holds 130 such pages (``NNN/source.html``) with Mozilla
Readability's extraction (``NNN/expected.html``) as the reference; its text tokens are what an extractor
should keep, so **recall** is the figure to watch there (precision against Readability's own choice of
boundaries is informative only). The AEB is scored as in ``bench_html_extract.py`` (token P/R/F1 against
``articleBody``), so a rule that raises recall on one set can be seen to cost F1 on the other.

Tokens are ``\\w+`` matches compared as bags, macro-averaged over pages (empty extraction scores 0). mdf runs
once per ``favor`` mode (precision, balanced, recall); peers (trafilatura, readability-lxml, resiliparse)
run in ``benchmarks/.venv-html`` as in ``bench_html_extract.py``, trafilatura with its own
``favor_precision`` / ``favor_recall`` switches as extra rows. Speed: AEB docs/s on one thread (best of
``--repeat``), each extractor in its own process, and mdf-balanced / resiliparse as a ratio.

Run from the repository root with mdf's venv active::

    python benchmarks/bench_html_recall.py [--repeat 1] [--only mdf,resiliparse] [--worst 10]

``--worst N`` also lists the N readability-pages where mdf (balanced) keeps the least of the reference.
Targets (issue 26): readability-pages recall >= trafilatura's; AEB token F1 >= 0.965.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_html_extract import decode, extractor, load_pages, peer_python, prf
from html_quality.data import html_text  # Readability's expected output as text, as bench_html_quality reads it

HERE = Path(__file__).resolve().parent
READABILITY = HERE.parent.parent / "shared" / "data" / "readability-pages"
FAVORS = ("precision", "balanced", "recall")
# (label, worker name, favor): mdf per favor mode, then the peers (trafilatura also per favor switch)
RUNS = [
    *((f"mdf {f}", "mdf", f) for f in FAVORS),
    ("trafilatura", "trafilatura", "balanced"),
    ("trafilatura precision", "trafilatura", "precision"),
    ("trafilatura recall", "trafilatura", "recall"),
    ("readability", "readability", "balanced"),
    ("resiliparse", "resiliparse", "balanced"),
]


def load_readability() -> tuple[list[str], list[str], list[str]]:
    names = sorted(d.name for d in READABILITY.iterdir() if (d / "source.html").exists())
    pages = [decode((READABILITY / n / "source.html").read_bytes()) for n in names]
    gold = [html_text((READABILITY / n / "expected.html").read_text(encoding="utf-8")) for n in names]
    return names, pages, gold


def worker(name: str, favor: str, pages_file: Path, out_file: Path, repeat: int) -> None:
    """Extract both sets; time ``repeat`` passes over the AEB; write texts and the best AEB time."""
    sets = json.loads(pages_file.read_text(encoding="utf-8"))
    if name == "mdf":
        import pyarrow as pa

        import mdf_kernels

        def run(pages: list[str]) -> list[str]:
            arr = pa.array(pages, pa.large_string())
            return mdf_kernels.html_extract(arr, favor=favor).field("text").to_pylist()
    elif name == "trafilatura" and favor != "balanced":
        import trafilatura

        def run(pages: list[str]) -> list[str]:
            kw = {f"favor_{favor}": True}
            return [trafilatura.extract(p, include_comments=False, **kw) or "" for p in pages]
    else:
        fn = extractor(name)

        def run(pages: list[str]) -> list[str]:
            return [fn(p) for p in pages]

    texts = {k: run(v) for k, v in sets.items()}  # also the warm-up
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        run(sets["aeb"])
        best = min(best, time.perf_counter() - t)
    out_file.write_text(json.dumps({"texts": texts, "seconds": best}), encoding="utf-8")


def mean_prf(texts: list[str], gold: list[str]) -> tuple[float, float, float]:
    scores = [prf(t or "", g) for t, g in zip(texts, gold, strict=True)]
    return tuple(sum(s[k] for s in scores) / len(scores) for k in range(3))  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="timed passes over the AEB per extractor (best kept)")
    ap.add_argument("--only", default="", help="comma-separated subset: mdf,trafilatura,readability,resiliparse")
    ap.add_argument("--worst", type=int, default=0, help="list the N readability-pages mdf keeps least of")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--favor", default="balanced", help=argparse.SUPPRESS)
    ap.add_argument("--pages", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.favor, args.pages, args.out, args.repeat)
    if not READABILITY.is_dir():
        sys.exit(f"skipped: the readability pages are not at {READABILITY} (the shared data of the mdf sessions)")
    _, aeb_pages, aeb_gold_map = load_pages()
    aeb_gold = list(aeb_gold_map.values())
    names, rd_pages, rd_gold = load_readability()
    only = set(filter(None, args.only.split(",")))
    runs = [r for r in RUNS if not only or r[1] in only]
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        pages_file = Path(tmp) / "pages.json"
        pages_file.write_text(json.dumps({"aeb": aeb_pages, "readability": rd_pages}), encoding="utf-8")
        for label, name, favor in runs:
            out = Path(tmp) / "out.json"
            python = sys.executable if name == "mdf" else str(peer_python())
            env = {**os.environ, "MDF_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
            cmd = [python, __file__, "--worker", name, "--favor", favor, "--pages", str(pages_file)]
            subprocess.run([*cmd, "--out", str(out), "--repeat", str(args.repeat)], check=True, env=env)
            results[label] = json.loads(out.read_text(encoding="utf-8"))
    print(f"AEB {len(aeb_pages)} pages, readability-pages {len(rd_pages)}; load {os.getloadavg()[0]:.1f}")
    print(f"{'extractor':<22} {'AEB P':>6} {'R':>6} {'F1':>6}   {'read. P':>7} {'R':>6} {'F1':>6} {'AEB docs/s':>10}")
    speed = {}
    for label, r in results.items():
        a = mean_prf(r["texts"]["aeb"], aeb_gold)
        b = mean_prf(r["texts"]["readability"], rd_gold)
        speed[label] = len(aeb_pages) / r["seconds"] if r["seconds"] != float("inf") else 0.0
        print(
            f"{label:<22} {a[0]:6.3f} {a[1]:6.3f} {a[2]:6.3f}   {b[0]:7.3f} {b[1]:6.3f} {b[2]:6.3f} {speed[label]:10.1f}"
        )
    if speed.get("mdf balanced") and speed.get("resiliparse"):
        print(f"mdf balanced / resiliparse AEB docs/s, one thread: {speed['mdf balanced'] / speed['resiliparse']:.2f}x")
    if args.worst and "mdf balanced" in results:
        texts = results["mdf balanced"]["texts"]["readability"]
        recalls = sorted((prf(t or "", g)[1], n) for t, g, n in zip(texts, rd_gold, names, strict=True))
        print(
            "worst readability-pages by mdf balanced recall:",
            ", ".join(f"{n} {r:.2f}" for r, n in recalls[: args.worst]),
        )
    return None


if __name__ == "__main__":
    main()
