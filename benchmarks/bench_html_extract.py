"""HTML main-text extraction: mdf's ``html_extract`` kernel vs trafilatura, readability-lxml and resiliparse.

Data: the 181 labelled article pages of ``../shared/data/aeb/`` (``html/<id>.html.gz`` + ``ground-truth.json``
with each page's ``articleBody``), read in place. Every page is decoded to text once here (UTF-8 when valid,
else the ``<meta>`` charset, else windows-1252) and every extractor gets the same decoded pages, so the figures
compare extraction only.

Quality: token precision, recall and F1 of the extracted text against ``articleBody``, tokens are ``\\w+``
matches compared as bags (multisets), macro-averaged over pages (an empty extraction scores 0).

Speed: documents per second on one thread, best of ``--repeat`` timed passes after a warm-up pass, each
extractor in its own process: mdf with ``MDF_NUM_THREADS=1`` and ``=2`` (the kernel pool size; the 1 -> 2
scaling figure), the peers in ``benchmarks/.venv-html`` (created with uv on first use: trafilatura,
readability-lxml, resiliparse).

Run from the repository root with mdf's venv active (mdf-kernels installed: ``pip install ./rust``)::

    python benchmarks/bench_html_extract.py [--repeat 3] [--only mdf,resiliparse]

Targets (issue 14): F1 >= trafilatura's in the same run; mdf docs/s on one thread >= 1.5x resiliparse's;
mdf 2 threads / 1 thread >= 1.8x.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
AEB = HERE.parent.parent / "shared" / "data" / "aeb"
PEER_VENV = HERE / ".venv-html"
PEERS = ("trafilatura", "readability", "resiliparse")
# the peers' versions, one list for every html benchmark (they share the venv): the ones the quality figures name
PEER_PACKAGES = ["trafilatura==2.3.*", "readability-lxml==0.9.*", "resiliparse==2.0.*", "pyarrow"]
META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w-]+)""", re.I)
TOKEN = re.compile(r"\w+")


def decode(raw: bytes) -> str:
    """The page as text: UTF-8 when it is valid UTF-8, else its meta charset, else windows-1252."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    m = META_CHARSET.search(raw[:4096])
    for enc in ([m.group(1).decode("ascii", "ignore")] if m else []) + ["cp1252"]:
        try:
            return raw.decode(enc, errors="replace")
        except LookupError:
            continue
    return raw.decode("utf-8", errors="replace")


def load_pages() -> tuple[list[str], list[str], dict[str, str]]:
    truth = json.loads((AEB / "ground-truth.json").read_text(encoding="utf-8"))
    ids = sorted(truth)
    pages = [decode(gzip.decompress((AEB / "html" / f"{i}.html.gz").read_bytes())) for i in ids]
    return ids, pages, {i: truth[i]["articleBody"] for i in ids}


def extractor(name: str) -> Callable[[str], str]:
    if name == "trafilatura":
        import trafilatura

        return lambda html: trafilatura.extract(html, include_comments=False) or ""
    if name == "readability":
        import lxml.html
        from readability import Document

        def readability(html: str) -> str:
            summary = Document(html).summary(html_partial=True)
            return lxml.html.fromstring(summary).text_content() if summary.strip() else ""

        return readability
    if name == "resiliparse":
        from resiliparse.extract.html2text import extract_plain_text

        return lambda html: extract_plain_text(html, main_content=True)
    raise ValueError(name)


def worker(name: str, pages_file: Path, out_file: Path, repeat: int) -> None:
    """Extract every page, time ``repeat`` passes, write ``{"texts": [...], "seconds": best}``."""
    pages = json.loads(pages_file.read_text(encoding="utf-8"))
    if name == "mdf":
        import pyarrow as pa

        import mdf_kernels

        arr = pa.array(pages, pa.large_string())

        def run_all() -> list[str]:
            return mdf_kernels.html_extract(arr).field("text").to_pylist()
    else:
        fn = extractor(name)

        def run_all() -> list[str]:
            return [fn(p) for p in pages]

    texts = run_all()  # warm-up (imports, caches, thread pool)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        run_all()
        best = min(best, time.perf_counter() - t)
    out_file.write_text(json.dumps({"texts": texts, "seconds": best}), encoding="utf-8")


def peer_python() -> Path:
    py = PEER_VENV / "bin" / "python"
    if not py.exists():
        subprocess.run(["uv", "venv", "-q", str(PEER_VENV), "-p", "3.11"], check=True)
        subprocess.run(["uv", "pip", "install", "-q", "--python", str(py), *PEER_PACKAGES], check=True)
    return py


def prf(pred: str, gold: str) -> tuple[float, float, float]:
    p, g = Counter(TOKEN.findall(pred)), Counter(TOKEN.findall(gold))
    common = sum((p & g).values())
    if not common:
        return 0.0, 0.0, 0.0
    precision, recall = common / sum(p.values()), common / sum(g.values())
    return precision, recall, 2 * precision * recall / (precision + recall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed passes per extractor (best kept)")
    ap.add_argument("--only", default="", help="comma-separated subset: mdf,trafilatura,readability,resiliparse")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--pages", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.pages, args.out, args.repeat)
    if not (AEB / "ground-truth.json").exists():
        sys.exit(f"skipped: the labelled pages are not at {AEB} (the shared data folder of the mdf sessions)")
    ids, pages, gold = load_pages()
    mb = sum(len(p.encode("utf-8")) for p in pages) / 1e6
    runs = [("mdf", "1"), ("mdf", "2"), *((p, "1") for p in PEERS)]
    only = set(filter(None, args.only.split(",")))
    runs = [r for r in runs if not only or r[0] in only]
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        pages_file = Path(tmp) / "pages.json"
        pages_file.write_text(json.dumps(pages), encoding="utf-8")
        for name, threads in runs:
            label = name if name != "mdf" else f"mdf ({threads} thread{'s' if threads != '1' else ''})"
            out = Path(tmp) / f"{name}-{threads}.json"
            python = sys.executable if name == "mdf" else str(peer_python())
            env = {**os.environ, "MDF_NUM_THREADS": threads, "OMP_NUM_THREADS": "1"}
            cmd = [python, __file__, "--worker", name, "--pages", str(pages_file), "--out", str(out)]
            subprocess.run([*cmd, "--repeat", str(args.repeat)], check=True, env=env)
            results[label] = json.loads(out.read_text(encoding="utf-8"))
    print(f"{len(pages)} pages, {mb:.1f} MB decoded; best of {args.repeat} passes; load {os.getloadavg()[0]:.1f}")
    print(f"{'extractor':<18} {'P':>6} {'R':>6} {'F1':>6} {'docs/s':>8}")
    f1s, speed = {}, {}
    for label, r in results.items():
        scores = [prf(t or "", gold[i]) for i, t in zip(ids, r["texts"], strict=True)]
        p, rec, f1 = (sum(s[k] for s in scores) / len(scores) for k in range(3))
        f1s[label], speed[label] = f1, len(pages) / r["seconds"]
        print(f"{label:<18} {p:6.3f} {rec:6.3f} {f1:6.3f} {speed[label]:8.1f}")
    one, two = speed.get("mdf (1 thread)"), speed.get("mdf (2 threads)")
    if one and "resiliparse" in speed:
        print(f"mdf 1 thread / resiliparse docs/s: {one / speed['resiliparse']:.2f}x (target >= 1.5x)")
    if one and two:
        print(f"mdf 2 threads / 1 thread: {two / one:.2f}x (target >= 1.8x)")
    if "mdf (1 thread)" in f1s and "trafilatura" in f1s:
        delta = f1s["mdf (1 thread)"] - f1s["trafilatura"]
        print(f"mdf F1 - trafilatura F1: {delta:+.3f} (target >= 0)")
    return None


if __name__ == "__main__":
    main()
