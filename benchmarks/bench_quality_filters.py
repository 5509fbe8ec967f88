"""Web-text quality filters: mdf against DataTrove 0.10.1 on the same texts in one run, decisions and speed.

Filters: GopherRepetition, GopherQuality, C4Quality (default, ``filter_no_terminal_punct=False``, and
``split_paragraph=False``: rules per spaCy sentence),
FineWebQuality, and the four chained in FineWeb's order (GopherRepetition -> GopherQuality ->
C4(filter_no_terminal_punct=False) -> FineWeb). Texts (``quality/texts.py``, cached under benchmarks/.data/):

* real: the 181 pages of ``../shared/data/aeb/`` as their articleBody, resiliparse's main-content extraction and
  its all-text extraction (navigation and footers included);
* generated: CommonCrawl-like pages mixing those paragraphs with boilerplate lines (navigation, cookies,
  share buttons, javascript, lorem ipsum, citations, bullets, repeated blocks);
* edges: texts built to sit on each rule's threshold, and bad inputs (empty, only punctuation, 1 MB of one
  character, replacement characters).

Each (system, filter) runs as its own subprocess pinned to one core (``taskset -c 0``; mdf with
``MDF_NUM_THREADS=1``): "whole" is its wall time from launch to exit (imports, spaCy load, reading and writing),
"filter" the time inside the filter calls only. Agreement: keep/drop equal (target >= 99.5 %), the reason equal
among the documents DataTrove drops (>= 99 %), C4's rewritten text byte-equal among documents both keep
(>= 99 %). Every disagreement is listed by class (DataTrove's reason vs mdf's, text source).

Run from the repository root with mdf's venv active (mdf-core, mdf-text, mdf-kernels installed); the DataTrove
venv ``benchmarks/.venv-quality`` is created from ``quality/requirements-datatrove.txt`` on first run:

    python benchmarks/bench_quality_filters.py [--generated 600] [--only gopher_quality,c4]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "benchmarks"
DT_VENV = HERE / ".venv-quality"
DT_PYTHON = DT_VENV / "bin" / "python"
DATA = HERE / ".data"
FILTERS = ["words", "gopher_repetition", "gopher_quality", "c4", "c4_no_punct", "c4_sentences", "fineweb", "chain"]
TARGETS = {"keep": 99.5, "reason": 99.0, "text": 99.0, "speed": 20.0}


def ensure_venv() -> None:
    if DT_PYTHON.exists():
        return
    print(f"creating {DT_VENV} (pip install -r quality/requirements-datatrove.txt) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(DT_VENV)], check=True)
    pip = [str(DT_PYTHON), "-m", "pip", "install", "-q", "-r", str(HERE / "quality" / "requirements-datatrove.txt")]
    subprocess.run(pip, check=True)


def run_side(python: str, script: str, name: str, src: Path, out: Path) -> tuple[float, dict]:
    cmd = [python, str(HERE / "quality" / script), name, str(src), str(out)]
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", "0", *cmd]
    env = {**os.environ, "MDF_NUM_THREADS": "1"}
    start = time.perf_counter()
    res = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    whole = time.perf_counter() - start
    return whole, json.loads(res.stdout.strip().splitlines()[-1])


def import_floor() -> float:
    """Wall time of an mdf process that only starts and imports what mdf_side.py imports: the part of
    "whole" no filter speed changes."""
    cmd = [sys.executable, "-c", "import pyarrow.parquet, mdf, mdf_text.ops.c4, mdf_text.ops.gopher, mdf_kernels"]
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", "0", *cmd]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def compare_words(src_table, dt, md) -> dict:
    """Tokenizer agreement: documents whose word lists (and word counts) equal spaCy's."""
    dw, mw = dt.column("words").to_pylist(), md.column("words").to_pylist()
    sources = src_table.column("source").to_pylist()
    n = len(dw)
    classes: Counter[tuple[str, str, str]] = Counter()
    for i in range(n):
        if dw[i] != mw[i]:
            diff = next((j for j, (a, b) in enumerate(zip(dw[i], mw[i], strict=False)) if a != b), None)
            at = "" if diff is None else f"{dw[i][diff]!r} vs {mw[i][diff]!r}"
            classes[(f"{len(dw[i])} words", f"{len(mw[i])} words, first diff {at}", sources[i])] += 1
    same = sum(a == b for a, b in zip(dw, mw, strict=True))
    count = sum(len(a) == len(b) for a, b in zip(dw, mw, strict=True))
    total = sum(len(a) for a in dw)
    off = sum(abs(len(a) - len(b)) for a, b in zip(dw, mw, strict=True))
    return {"same": 100 * same / n, "count": 100 * count / n, "word_err": 100 * off / max(1, total), "classes": classes}


def compare(name: str, src_table, dt, md) -> dict:
    n = dt.num_rows
    dk, mk = dt.column("keep").to_pylist(), md.column("keep").to_pylist()
    dr, mr = dt.column("reason").to_pylist(), md.column("reason").to_pylist()
    dtext, mtext = dt.column("text").to_pylist(), md.column("text").to_pylist()
    sources = src_table.column("source").to_pylist()
    keep_eq = sum(a == b for a, b in zip(dk, mk, strict=True))
    dropped = [i for i in range(n) if not dk[i]]
    reason_eq = sum(dr[i] == mr[i] for i in dropped)
    both_kept = [i for i in range(n) if dk[i] and mk[i]]
    text_eq = sum(dtext[i] == mtext[i] for i in both_kept)
    classes: Counter[tuple[str, str, str]] = Counter()
    for i in range(n):
        if dk[i] != mk[i] or dr[i] != mr[i]:
            classes[(str(dr[i]), str(mr[i]), sources[i])] += 1
        elif dk[i] and mk[i] and dtext[i] != mtext[i] and name.startswith("c4"):
            classes[("kept", "kept, text differs", sources[i])] += 1
    return {
        "keep": 100 * keep_eq / n,
        "reason": 100 * reason_eq / max(1, len(dropped)),
        "text": 100 * text_eq / max(1, len(both_kept)),
        "dropped": len(dropped),
        "classes": classes,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--generated", type=int, default=600, help="generated CommonCrawl-like pages")
    ap.add_argument("--only", default=",".join(FILTERS), help="comma-separated subset of " + ",".join(FILTERS))
    args = ap.parse_args()
    ensure_venv()
    src = DATA / f"quality_texts_{args.generated}.parquet"
    if not src.exists():
        subprocess.run([str(DT_PYTHON), str(HERE / "quality" / "texts.py"), str(src), str(args.generated)], check=True)
    table = pq.read_table(src)
    mb = sum(len(t.encode()) for t in table.column("text").to_pylist()) / 1e6
    print(f"{table.num_rows} texts, {mb:.1f} MB ({dict(Counter(table.column('source').to_pylist()))})")
    print("one core each (taskset -c 0, MDF_NUM_THREADS=1); machine shared with other jobs, so ratios matter\n")
    rows = []
    for name in args.only.split(","):
        dt_out, md_out = DATA / f"q_dt_{name}.parquet", DATA / f"q_mdf_{name}.parquet"
        dt_whole, dt_info = run_side(str(DT_PYTHON), "datatrove_side.py", name, src, dt_out)
        md_whole, md_info = run_side(sys.executable, "mdf_side.py", name, src, md_out)
        if name == "words":
            w = compare_words(table, pq.read_table(dt_out), pq.read_table(md_out))
            print(
                f"{'tokenizer':18s} same words {w['same']:6.2f}% of docs, same count {w['count']:6.2f}%, "
                f"count error {w['word_err']:.3f}% of words | DataTrove {dt_info['filter_s']:.2f}s "
                f"mdf {md_info['filter_s']:.3f}s = {dt_info['filter_s'] / md_info['filter_s']:.0f}x"
            )
            for (d, m, source), k in w["classes"].most_common(15):
                print(f"{'':18s}   {k:4d} x  spaCy {d:12s} mdf {m} [{source}]")
            continue
        cmp = compare(name, table, pq.read_table(dt_out), pq.read_table(md_out))
        rows.append((name, dt_whole, dt_info, md_whole, md_info, cmp))
        print(
            f"{name:18s} keep {cmp['keep']:6.2f}%  reason {cmp['reason']:6.2f}% of {cmp['dropped']} dropped"
            + (f"  text {cmp['text']:6.2f}%" if name.startswith("c4") or name == "chain" else "")
            + f" | filter: DataTrove {dt_info['filter_s']:.2f}s mdf {md_info['filter_s']:.3f}s"
            f" = {dt_info['filter_s'] / md_info['filter_s']:.0f}x | whole: {dt_whole:.1f}s vs {md_whole:.1f}s"
            f" = {dt_whole / md_whole:.1f}x",
            flush=True,
        )
        if md_info.get("counters"):
            # DataTrove has no entry for a counter never incremented; mdf reports it as 0
            mine = {k: v for k, v in md_info["counters"].items() if v}
            theirs = {k: v for k, v in dt_info.get("counters", {}).items() if k.startswith("line-") and v}
            verdict = "equal to" if mine == theirs else "DIFFER from"
            print(f"{'':18s} C4 line counters {verdict} DataTrove's: {md_info['counters']}")
            if mine != theirs:
                print(f"{'':18s} DataTrove: {dt_info.get('counters')}")
        for (d, m, source), k in cmp["classes"].most_common():
            print(f"{'':18s}   {k:4d} x  DataTrove {d!s:40s} mdf {m!s:40s} [{source}]")
    floor = import_floor()
    print(f"\nmdf process floor (start Python, import pyarrow + mdf + mdf_text ops, one core): {floor:.1f}s")
    fails = []
    for name, dtw, dti, mdw, mdi, cmp in rows:
        for key in ("keep", "reason") + (("text",) if name.startswith("c4") else ()):
            if cmp[key] < TARGETS[key]:
                fails.append(f"{name} {key} agreement {cmp[key]:.2f}% < {TARGETS[key]}%")
        if dti["filter_s"] / mdi["filter_s"] < TARGETS["speed"]:
            fails.append(f"{name} filter-only speed {dti['filter_s'] / mdi['filter_s']:.1f}x < 20x")
        if dtw / mdw < TARGETS["speed"]:
            fails.append(f"{name} whole-process speed {dtw / mdw:.1f}x < 20x")
    print("all targets met" if not fails else "BELOW TARGET:\n  " + "\n  ".join(fails))


if __name__ == "__main__":
    main()
