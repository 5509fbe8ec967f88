"""W1 peer: the same work as a DataTrove pipeline; run with the DataTrove venv's python, not mdf's.

``ParquetReader -> URLFilter(extra_domains=blocklist, use_integrated_lists=False) -> LambdaFilter(length) ->
ParquetWriter(zstd)`` under ``LocalPipelineExecutor(tasks=<files>, workers=N)``.

Two configuration notes, both about semantics rather than speed:

* ``URLFilter`` matches the blocklist against tldextract's registered domain (domain + public suffix) and the
  full host. The demo data's hosts end in ``.example``, which is not in the Public Suffix List, so tldextract
  finds no registered domain and nothing would be blocked; adding ``example`` as an extra suffix makes it
  parse ``www.casino-bonus.example`` like ``www.casino-bonus.com``. It also uses the bundled suffix-list
  snapshot (``suffix_list_urls=()``) so it never tries the network.
* The reader skips documents whose text is null or empty, which mdf rejects as ``null_text`` / ``too_short``.

The reader needs ``read_metadata=True`` (the URL is metadata), so it also reads ``lang``; the writer keeps its
defaults (content-defined chunking, page index) except ``compression="zstd"``.

Usage: ``python datatrove_pipeline.py --data DIR --blocklist FILE --out DIR --logs DIR --tasks N --workers N``;
prints the kept rows (counted from the output files' footers).
"""

from __future__ import annotations

import argparse
import glob
import os

MIN_LENGTH = 200
MAX_LENGTH = 100_000


def read_blocklist(path: str) -> list[str]:
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = line.split("#", 1)[0].strip().lower().removeprefix("*.").strip(".")
            if d:
                out.append(d)
    return sorted(set(out))


def length_ok(doc) -> bool:  # doc: a datatrove Document
    return MIN_LENGTH <= len(doc.text) <= MAX_LENGTH


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--blocklist", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--logs", required=True)
    ap.add_argument("--tasks", type=int, required=True)
    ap.add_argument("--workers", type=int, required=True)
    args = ap.parse_args()

    import pyarrow.parquet as pq
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.filters import LambdaFilter, URLFilter
    from datatrove.pipeline.readers import ParquetReader
    from datatrove.pipeline.writers import ParquetWriter
    from tldextract import TLDExtract

    url_filter = URLFilter(extra_domains=read_blocklist(args.blocklist), use_integrated_lists=False)
    url_filter.tldextractor = TLDExtract(suffix_list_urls=(), extra_suffixes=["example"])
    pipeline = [
        ParquetReader(args.data, glob_pattern="*.parquet"),
        url_filter,
        LambdaFilter(length_ok),
        ParquetWriter(args.out, compression="zstd"),
    ]
    LocalPipelineExecutor(pipeline, tasks=args.tasks, workers=args.workers, logging_dir=args.logs).run()
    outputs = glob.glob(os.path.join(args.out, "**", "*.parquet"), recursive=True)
    print(sum(pq.read_metadata(p).num_rows for p in outputs))


if __name__ == "__main__":
    main()
