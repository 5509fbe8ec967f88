"""DataTrove 0.10.1's side of bench_quality_filters.py (runs in benchmarks/.venv-quality): one filter set-up,
every text, decisions and (for C4) rewritten texts to Parquet, filter-only seconds to JSON."""

from __future__ import annotations

import json
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
from datatrove.data import Document
from datatrove.pipeline.filters import (
    C4QualityFilter,
    FineWebQualityFilter,
    GopherQualityFilter,
    GopherRepetitionFilter,
)
from datatrove.utils.text import split_into_parts

FILTERS = {
    "gopher_repetition": lambda: [("gopher_repetition", GopherRepetitionFilter())],
    "gopher_quality": lambda: [("gopher_quality", GopherQualityFilter())],
    "c4": lambda: [("c4", C4QualityFilter())],
    "c4_no_punct": lambda: [("c4", C4QualityFilter(filter_no_terminal_punct=False))],
    "c4_sentences": lambda: [("c4", C4QualityFilter(split_paragraph=False))],
    "fineweb": lambda: [("fineweb", FineWebQualityFilter())],
    "chain": lambda: [
        ("gopher_repetition", GopherRepetitionFilter()),
        ("gopher_quality", GopherQualityFilter()),
        ("c4", C4QualityFilter(filter_no_terminal_punct=False)),
        ("fineweb", FineWebQualityFilter()),
    ],
}


def words(texts: list[str], out: str) -> None:
    """The tokenizer alone: DataTrove's split_into_words (spaCy blank("en")) of every text."""
    from datatrove.utils.text import split_into_words

    split_into_words("warm up")
    start = time.perf_counter()
    toks = [split_into_words(t) for t in texts]
    seconds = time.perf_counter() - start
    pq.write_table(pa.table({"words": toks}), out)
    print(json.dumps({"filter_s": seconds}))


def main(name: str, src: str, out: str) -> None:
    texts = pq.read_table(src, columns=["text"]).column("text").to_pylist()
    if name == "words":
        return words(texts, out)
    chain = FILTERS[name]()
    split_into_parts("warm up the tokenizer")  # spaCy's load is start-up, not filtering
    split_into_parts.cache_clear()
    keep, reason, final = [], [], []
    start = time.perf_counter()
    for i, t in enumerate(texts):
        doc = Document(text=t, id=str(i))
        why = None
        for stage, f in chain:
            try:
                res = f.filter(doc)
            except Exception as exc:  # DataTrove raises on some inputs (e.g. zero words): record it
                res = (False, f"exception:{type(exc).__name__}")
            if res is not True and not (isinstance(res, tuple) and res[0]):
                why = f"{stage}:{res[1] if isinstance(res, tuple) else 'dropped'}"
                break
        keep.append(why is None)
        reason.append(why)
        final.append(doc.text if why is None else None)
    seconds = time.perf_counter() - start
    pq.write_table(pa.table({"keep": keep, "reason": reason, "text": final}), out)
    counters = {k: int(getattr(v, "total", v)) for stage, f in chain if stage == "c4" for k, v in f.stats.stats.items()}
    print(json.dumps({"filter_s": seconds, "counters": counters}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
