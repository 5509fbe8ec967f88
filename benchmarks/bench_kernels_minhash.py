"""MinHash throughput: mdf_kernels.minhash vs datasketch and rensa (128 perms, word 5-grams,
~2.5 KB English-like texts). Peers get the same shingles from a Python tokenizer that mirrors
mdf's documented shingling, and their time includes that tokenization (end to end, text in,
signature out); rensa's hashing-only time on pre-tokenized input is printed too.

``--texts aeb`` uses the main text of the 181 real article pages in ``../shared/data/aeb/``
(``ground-truth.json``, read in place, cycled to the same number of documents) instead: 161 of
them hold a curly quote, a dash or an accented letter, which the generated texts never do.

Run: python benchmarks/bench_kernels_minhash.py [--texts aeb]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from bench_kernels_common import best_of, emit, english_like_texts, run_worker, worker_name

N_DOCS = 4000
N_DOCS_SLOW = 400  # datasketch is measured on fewer docs; rates are per doc
NUM_PERM, NGRAM = 128, 5
PUNCT = re.compile(r"[^\w\s]")
AEB = Path(__file__).resolve().parents[2] / "shared" / "data" / "aeb" / "ground-truth.json"


def documents(n: int) -> list[str]:
    """``n`` documents of the source ``MDF_BENCH_TEXTS`` names: generated, or the AEB pages' main text cycled."""
    if os.environ.get("MDF_BENCH_TEXTS") != "aeb":
        return english_like_texts(n)
    bodies = [v["articleBody"] for v in json.loads(AEB.read_text()).values() if v.get("articleBody")]
    return [bodies[i % len(bodies)] for i in range(n)]


def shingles(text: str) -> list[str]:
    toks = PUNCT.sub("", text.lower()).split()
    if len(toks) <= NGRAM:
        return [" ".join(toks)] if toks else []
    return [" ".join(toks[i : i + NGRAM]) for i in range(len(toks) - NGRAM + 1)]


def worker(name: str) -> None:
    if name == "mdf":
        import pyarrow as pa

        import mdf_kernels as mk

        arr = pa.array(documents(N_DOCS))
        mk.minhash(arr.slice(0, 10))
        secs = best_of(lambda: mk.minhash(arr, num_perm=NUM_PERM, ngram=NGRAM))
        emit({"docs_per_s": N_DOCS / secs, "threads": mk.num_threads()})
    elif name == "datasketch":
        from datasketch import MinHash

        texts = documents(N_DOCS_SLOW)

        def run():
            for t in texts:
                m = MinHash(num_perm=NUM_PERM, seed=1)
                m.update_batch([s.encode() for s in shingles(t)])
                m.digest()

        emit({"docs_per_s": N_DOCS_SLOW / best_of(run, 2)})
    elif name == "rensa":
        from rensa import RMinHash

        texts = documents(N_DOCS)

        def per_row():
            for t in texts:
                m = RMinHash(num_perm=NUM_PERM, seed=1)
                m.update(shingles(t))
                m.digest()

        def bulk():
            RMinHash.digest_matrix_from_token_sets([shingles(t) for t in texts], NUM_PERM, 1)

        pre = [shingles(t) for t in texts]
        emit(
            {
                "per_row": N_DOCS / best_of(per_row),
                "bulk": N_DOCS / best_of(bulk),
                "bulk_hash_only": N_DOCS / best_of(lambda: RMinHash.digest_matrix_from_token_sets(pre, NUM_PERM, 1)),
            }
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", choices=["generated", "aeb"], default="generated")
    args = ap.parse_args()
    if args.texts == "aeb" and not AEB.exists():
        raise SystemExit(f"--texts aeb needs {AEB} (see ../shared/data/README.md)")
    source = {"MDF_BENCH_TEXTS": args.texts}
    one = {"MDF_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1", **source}
    mdf1 = run_worker(__file__, "mdf", one)["docs_per_s"]
    ds = run_worker(__file__, "datasketch", one)["docs_per_s"]
    rensa = run_worker(__file__, "rensa", one)
    mdf2 = run_worker(__file__, "mdf", {"MDF_NUM_THREADS": "2", **source})
    what = "~2.5 KB generated texts" if args.texts == "generated" else "the AEB pages' main text"
    print(f"minhash, {NUM_PERM} perms, word {NGRAM}-grams, {what}, docs/s (single thread unless noted)")
    print(f"  mdf_kernels.minhash          {mdf1:12,.0f}")
    print(f"  datasketch update_batch      {ds:12,.0f}   mdf/datasketch = {mdf1 / ds:6.1f}x")
    print(
        f"  rensa RMinHash per row       {rensa['per_row']:12,.0f}   mdf/rensa      = {mdf1 / rensa['per_row']:6.1f}x"
    )
    print(f"  rensa digest_matrix bulk     {rensa['bulk']:12,.0f}   mdf/rensa bulk = {mdf1 / rensa['bulk']:6.1f}x")
    print(f"  rensa bulk, pre-tokenized    {rensa['bulk_hash_only']:12,.0f}   (hashing only, tokenization excluded)")
    print(
        f"  mdf_kernels.minhash {mdf2['threads']} threads {mdf2['docs_per_s']:12,.0f}   2 threads / 1 = {mdf2['docs_per_s'] / mdf1:4.2f}x"
    )


if __name__ == "__main__":
    name = worker_name()
    worker(name) if name else main()
    sys.exit(0)
