"""Exact-dedup peer of ``bench_dedup_exact.py``: the plain Python script a user would write.

File by file: pyarrow reads the table, a Python loop hashes every text with ``hashlib.blake2b`` (16-byte digest)
into one ``set`` shared by all files, the first row of each digest is kept, pyarrow writes the kept rows of the
file as zstd Parquet. One process (the set must be shared).

Usage: ``python exact_plain.py --out DIR FILES...``; prints the kept rows.
"""

from __future__ import annotations

import argparse
import os
from hashlib import blake2b

import pyarrow as pa
import pyarrow.parquet as pq


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    seen: set[bytes] = set()
    kept = 0
    for k, path in enumerate(args.files):
        table = pq.read_table(path)
        keep = []
        for text in table.column("text").to_pylist():
            digest = blake2b(text.encode("utf-8"), digest_size=16).digest()
            if digest in seen:
                keep.append(False)
            else:
                seen.add(digest)
                keep.append(True)
        out = table.filter(pa.array(keep))
        pq.write_table(out, os.path.join(args.out, f"part-{k:05d}.parquet"), compression="zstd")
        kept += out.num_rows
    print(kept)


if __name__ == "__main__":
    main()
