"""mdf's side of bench_quality_filters.py: the same filter set-up as mdf operators on Arrow batches of 1,000
rows, decisions and (for C4) rewritten texts to Parquet, filter-only seconds to JSON."""

from __future__ import annotations

import json
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mdf import REASON, BatchContext
from mdf_text.ops.c4 import C4QualityFilter
from mdf_text.ops.fineweb import FineWebQualityFilter
from mdf_text.ops.gopher import GopherQualityFilter, GopherRepetitionFilter

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


def words(table: pa.Table, out: str) -> None:
    """The tokenizer alone: mdf-kernels' text_words of every text."""
    import mdf_kernels

    start = time.perf_counter()
    toks = mdf_kernels.text_words(table.column("text"))
    seconds = time.perf_counter() - start
    pq.write_table(pa.table({"words": toks}), out)
    print(json.dumps({"filter_s": seconds}))


def main(name: str, src: str, out: str) -> None:
    table = pq.read_table(src, columns=["id", "text"])
    if name == "words":
        return words(table, out)
    chain = FILTERS[name]()
    for _, op in chain:
        op.ensure_setup()
    kept_parts, rej_parts = [], []
    start = time.perf_counter()
    for b, batch in enumerate(table.to_batches(max_chunksize=1000)):
        ctx = BatchContext("bench", b, 0)
        for stage, op in chain:
            batch, rejected = op.process(batch, ctx, keep_rejected=True)
            if rejected is not None and rejected.num_rows:
                reason = pc.replace_substring_regex(rejected.column(REASON), r"^[a-z0-9_]+:", f"{stage}:")
                rej_parts.append(pa.table({"id": rejected.column("id"), "reason": reason}))
        kept_parts.append(pa.table({"id": batch.column("id"), "text": batch.column("text")}))
    seconds = time.perf_counter() - start
    kept = pa.concat_tables(kept_parts)
    rej = pa.concat_tables(rej_parts) if rej_parts else pa.table({"id": pa.array([], pa.string()), "reason": []})
    ids = table.column("id").to_pylist()
    text_of = dict(zip(kept.column("id").to_pylist(), kept.column("text").to_pylist(), strict=True))
    why_of = dict(zip(rej.column("id").to_pylist(), rej.column("reason").to_pylist(), strict=True))
    counters = {k: v for _, op in chain for k, v in op.metrics.counters.items()}
    pq.write_table(
        pa.table(
            {
                "keep": [i in text_of for i in ids],
                "reason": [why_of.get(i) for i in ids],
                "text": [text_of.get(i) for i in ids],
            }
        ),
        out,
    )
    print(json.dumps({"filter_s": seconds, "counters": counters}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
