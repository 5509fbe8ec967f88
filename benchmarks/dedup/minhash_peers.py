"""MinHash-LSH dedup peers of ``bench_dedup_minhash.py``, each the whole job as its users write it: pyarrow reads
the Parquet files, Python tokenizes every text into word n-gram shingles (lowercase, punctuation removed, split
on whitespace: mdf's documented shingling), the library signs and indexes them, pyarrow writes the kept rows
(zstd, like mdf's writer). Streaming query-then-insert: a row whose query finds an earlier kept row is dropped,
otherwise it is inserted and kept, so the first row of a near-duplicate group in input order is kept, as mdf's
inline streaming mode does.

* ``datasketch``: ``MinHash(num_perm, seed=1)`` per row with ``update_batch`` over the UTF-8 shingles,
  ``MinHashLSH(threshold, num_perm)`` (datasketch chooses bands x rows from the threshold; printed).
* ``rensa-lsh``: ``RMinHash.from_token_sets`` (rensa's bulk signer) then ``RMinHashLSH(threshold, num_perm,
  num_bands)`` query-then-insert. rensa needs ``num_perm`` divisible by ``num_bands``, so it is given
  ``num_perm = bands * rows`` with mdf's bands and rows (126 = 18 x 7 at threshold 0.6): the same banding as mdf,
  two fewer permutations to compute.
* ``rensa-dedup``: the same signatures through ``RMinHashDeduplicator(threshold, num_perm, use_lsh=True,
  num_bands).add`` (rensa's own streaming deduplicator; it also checks the estimated Jaccard of candidates).

Usage: ``python minhash_peers.py SYSTEM --out DIR --threshold T --num-perm N --ngram K --bands B --rows R FILES``;
prints a JSON line with the phase times.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time

PUNCT = re.compile(r"[^\w\s]")


def shingles(text: str, n: int) -> list[str]:
    toks = PUNCT.sub("", text.lower()).split()
    if len(toks) <= n:
        return [" ".join(toks)] if toks else []
    return [" ".join(toks[i : i + n]) for i in range(len(toks) - n + 1)]


def keep_datasketch(texts: list[str], a: argparse.Namespace) -> tuple[list[bool], dict]:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=a.threshold, num_perm=a.num_perm, params=(a.bands, a.rows) if a.fixed_bands else None)
    keep = []
    for i, text in enumerate(texts):
        m = MinHash(num_perm=a.num_perm, seed=1)
        m.update_batch([s.encode("utf-8") for s in shingles(text, a.ngram)])
        if lsh.query(m):
            keep.append(False)
        else:
            lsh.insert(i, m)
            keep.append(True)
    return keep, {"bands": lsh.b, "rows": lsh.r, "num_perm": a.num_perm}


def keep_rensa(texts: list[str], a: argparse.Namespace, dedup: bool) -> tuple[list[bool], dict]:
    from rensa import RMinHash, RMinHashDeduplicator, RMinHashLSH

    num_perm, seed = a.bands * a.rows, 42  # see the module docstring; 42 is RMinHashDeduplicator's default seed
    t0 = time.perf_counter()
    token_sets = [shingles(t, a.ngram) for t in texts]
    t1 = time.perf_counter()
    sigs = RMinHash.from_token_sets(token_sets, num_perm, seed)
    t2 = time.perf_counter()
    if dedup:
        index = RMinHashDeduplicator(a.threshold, num_perm, True, a.bands, seed)
        keep = [index.add(str(i), m) for i, m in enumerate(sigs)]
    else:
        lsh = RMinHashLSH(a.threshold, num_perm, a.bands)
        keep = []
        for i, m in enumerate(sigs):
            if lsh.query(m):
                keep.append(False)
            else:
                lsh.insert(i, m)
                keep.append(True)
    times = {"tokenize_s": t1 - t0, "sign_s": t2 - t1, "index_s": time.perf_counter() - t2}
    return keep, {"bands": a.bands, "rows": a.rows, "num_perm": num_perm, **times}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("system", choices=["datasketch", "rensa-lsh", "rensa-dedup"])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--threshold", type=float, required=True)
    ap.add_argument("--num-perm", type=int, required=True)
    ap.add_argument("--ngram", type=int, required=True)
    ap.add_argument("--bands", type=int, required=True)
    ap.add_argument("--fixed-bands", action="store_true", help="datasketch too uses --bands x --rows")
    ap.add_argument("--rows", type=int, required=True)
    a = ap.parse_args()

    import pyarrow as pa
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    table = pa.concat_tables([pq.read_table(f) for f in a.files])
    texts = table.column("text").to_pylist()
    t1 = time.perf_counter()
    if a.system == "datasketch":
        keep, info = keep_datasketch(texts, a)
    else:
        keep, info = keep_rensa(texts, a, dedup=a.system == "rensa-dedup")
    t2 = time.perf_counter()
    os.makedirs(a.out, exist_ok=True)
    pq.write_table(table.filter(pa.array(keep)), os.path.join(a.out, "part-000.parquet"), compression="zstd")
    info.update(read_s=t1 - t0, dedup_s=t2 - t1, write_s=time.perf_counter() - t2)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
