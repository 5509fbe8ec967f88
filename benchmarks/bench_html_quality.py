"""Main-text quality: mdf's ``html_extract`` (each ``favor`` mode) vs trafilatura, readability-lxml and resiliparse.

Three labelled sets of ``../shared/data``, read in place (``html_quality/data.py``):

* ``trafeval``: 506 pages of trafilatura's own evaluation corpus (``trafeval-dev``; many languages and kinds of
  site), scored with trafilatura's snippet metric: pooled P/R/F1 of ``with`` snippets kept and ``without``
  snippets let in (``html_quality/scoring.py``). The other 484 pages of that corpus are held out by the team.
* ``aeb``: 181 news pages, token P/R/F1 against ``articleBody`` (as ``bench_html_extract.py``).
* ``readability``: Readability's 130 test pages, token P/R/F1 against its ``expected.html`` text (recall is the
  figure to watch: the reference is one extractor's choice of boundaries).

Printed: one table per set; F1 by language (lid.176 on the gold text) and by page kind (what the page declares:
schema.org type, og:type, the software behind it) and markup (``<article>``/``<main>``/``articleBody`` present
or not); the ``--worst`` pages where mdf trails trafilatura. The ``mdf <favor> rules`` rows are the rules alone
(``blocks: rules``). The operator's default, ``blocks: model``, was trained on these very pages, so its figures
here come from ``--cv K``: block models trained by ``train_html_blocks.py`` on K-1 folds of *sites* and scored on
the held-out fold, so no page is scored by a model that saw its site: that row ("cv") predicts pages mdf was never
tuned on; ``--model`` adds the shipped model's rows, in-sample on these sets (an upper bound, not a result).

Run from the repository root with mdf's venv active (peers get ``benchmarks/.venv-html``, made on first use)::

    python benchmarks/bench_html_quality.py [--sets trafeval,aeb,readability] [--only mdf,trafilatura]
        [--worst 20] [--cv 5] [--model] [--refresh]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from html_quality import data, report
from html_quality.runners import FAVORS, PEERS, mdf_texts, peer_texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(data.SETS), help="comma-separated: trafeval,aeb,readability")
    ap.add_argument("--only", default="", help="comma-separated subset: mdf,trafilatura,readability,resiliparse")
    ap.add_argument("--worst", type=int, default=20, help="list the N pages where mdf trails trafilatura most")
    ap.add_argument("--cv", type=int, default=0, help="also score mdf with block models cross-validated by site")
    ap.add_argument("--model", action="store_true", help="also score mdf with the shipped block model (in-sample)")
    ap.add_argument("--refresh", action="store_true", help="rerun the peers instead of reading their cache")
    args = ap.parse_args()
    pages = data.load(tuple(s for s in args.sets.split(",") if s))
    raws = [p.raw for p in pages]
    only = set(filter(None, args.only.split(",")))
    runs: report.Texts = {}
    seconds: dict[str, float] = {}
    if not only or "mdf" in only:
        for favor in FAVORS:
            start = time.perf_counter()
            runs[f"mdf {favor} rules"] = mdf_texts(raws, favor)
            seconds[f"mdf {favor} rules"] = time.perf_counter() - start
        if args.model:
            import mdf_kernels

            for favor in FAVORS:
                runs[f"mdf {favor} model"] = mdf_texts(raws, favor, mdf_kernels.html_block_model())
        if args.cv:
            from train_html_blocks import cross_validated_texts

            for favor, texts in cross_validated_texts(pages, args.cv, FAVORS).items():
                runs[f"mdf {favor} cv{args.cv}"] = texts
    versions = {}
    for name in PEERS:
        if not only or name in only:
            runs[name], versions[name] = peer_texts(name, raws, args.refresh)
    threads = os.environ.get("MDF_NUM_THREADS", "all")
    print(f"{len(pages)} pages; peers {versions}; mdf threads {threads}; load {os.getloadavg()[0]:.1f}")
    for label, s in seconds.items():
        print(f"  {label}: {len(pages) / s:,.0f} pages/s (whole list, not a speed benchmark: see bench_html_extract)")
    for set_name in data.SETS:
        lines = report.set_table(pages, runs, set_name)
        if lines:
            print("\n" + "\n".join(lines))
    for set_name, by in (("trafeval", "lang"), ("trafeval", "kind"), ("trafeval", "markup"), ("readability", "lang")):
        lines = report.breakdown(pages, runs, set_name, by)
        if lines:
            print("\n" + "\n".join(lines))
    if args.worst:
        mine = f"mdf balanced cv{args.cv}" if args.cv else "mdf balanced rules"
        print("\n" + "\n".join(report.worst(pages, runs, mine, "trafilatura", args.worst)))


if __name__ == "__main__":
    main()
