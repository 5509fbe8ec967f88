"""W1 peer: the plain per-row Python script (pyarrow for I/O, a Python loop for the filtering).

What a data engineer writes without a framework: read each Parquet file, loop over the rows, keep a row when its
URL host and none of the host's parent domains is blocklisted and its text has ``min..max`` code points, write the
kept rows as zstd Parquet. ``--workers 2`` runs the files in a ``multiprocessing.Pool`` (one file per task).

Semantics match mdf's ``url_filter`` + ``text_length_filter``: host = ``urlsplit(url).hostname`` (lower-cased,
brackets removed) with a trailing dot stripped; a missing / empty / unparsable host, or one with whitespace or
``<>"{}|\\^`%``, drops the row; null text is dropped.

Usage: ``python plain_python.py --blocklist FILE --out DIR [--workers N] FILE.parquet ...``; prints kept rows.
"""

from __future__ import annotations

import argparse
import os
import re
from multiprocessing import Pool
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq

MIN_LENGTH = 200
MAX_LENGTH = 100_000
COLUMNS = ["id", "url", "text"]
_BAD_HOST = re.compile(r"[\s<>\"{}|\\^`%]")

_blocked: frozenset[str] = frozenset()
_out_dir = ""


def read_blocklist(path: str) -> frozenset[str]:
    out = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = line.split("#", 1)[0].strip().lower().removeprefix("*.").strip(".")
            if d:
                out.add(d)
    return frozenset(out)


def host_blocked(url: str | None, blocked: frozenset[str]) -> bool:
    """True when the row must go: bad URL, or its host / a parent domain is blocklisted."""
    if url is None:
        return True
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return True
    if not host:
        return True
    host = host.rstrip(".")
    if not host or _BAD_HOST.search(host):
        return True
    while True:
        if host in blocked:
            return True
        dot = host.find(".")
        if dot < 0:
            return False
        host = host[dot + 1 :]


def filter_file(path: str) -> int:
    table = pq.read_table(path, columns=COLUMNS)
    urls = table.column("url").to_pylist()
    texts = table.column("text").to_pylist()
    keep = [
        text is not None and MIN_LENGTH <= len(text) <= MAX_LENGTH and not host_blocked(url, _blocked)
        for url, text in zip(urls, texts, strict=True)
    ]
    kept = table.filter(pa.array(keep, pa.bool_()))
    pq.write_table(kept, os.path.join(_out_dir, os.path.basename(path)), compression="zstd")
    return kept.num_rows


def _init(blocked: frozenset[str], out_dir: str) -> None:
    global _blocked, _out_dir
    _blocked, _out_dir = blocked, out_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--blocklist", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    blocked = read_blocklist(args.blocklist)
    if args.workers <= 1:
        _init(blocked, args.out)
        kept = sum(map(filter_file, args.files))
    else:
        with Pool(args.workers, initializer=_init, initargs=(blocked, args.out)) as pool:
            kept = sum(pool.imap_unordered(filter_file, args.files))
    print(kept)


if __name__ == "__main__":
    main()
