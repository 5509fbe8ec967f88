"""MinHash throughput: mdf_kernels.minhash vs datasketch and rensa (128 perms, word 5-grams,
~2.5 KB English-like texts). Peers get the same shingles from a Python tokenizer that mirrors
mdf's documented shingling, and their time includes that tokenization (end to end, text in,
signature out); rensa's hashing-only time on pre-tokenized input is printed too.

Run: python benchmarks/bench_kernels_minhash.py
"""

from __future__ import annotations

import re
import sys

from bench_kernels_common import best_of, emit, english_like_texts, run_worker, worker_name

N_DOCS = 4000
N_DOCS_SLOW = 400  # datasketch is measured on fewer docs; rates are per doc
NUM_PERM, NGRAM = 128, 5
PUNCT = re.compile(r"[^\w\s]")


def shingles(text: str) -> list[str]:
    toks = PUNCT.sub("", text.lower()).split()
    if len(toks) <= NGRAM:
        return [" ".join(toks)] if toks else []
    return [" ".join(toks[i : i + NGRAM]) for i in range(len(toks) - NGRAM + 1)]


def worker(name: str) -> None:
    if name == "mdf":
        import pyarrow as pa

        import mdf_kernels as mk

        arr = pa.array(english_like_texts(N_DOCS))
        mk.minhash(arr.slice(0, 10))
        secs = best_of(lambda: mk.minhash(arr, num_perm=NUM_PERM, ngram=NGRAM))
        emit({"docs_per_s": N_DOCS / secs, "threads": mk.num_threads()})
    elif name == "datasketch":
        from datasketch import MinHash

        texts = english_like_texts(N_DOCS_SLOW)

        def run():
            for t in texts:
                m = MinHash(num_perm=NUM_PERM, seed=1)
                m.update_batch([s.encode() for s in shingles(t)])
                m.digest()

        emit({"docs_per_s": N_DOCS_SLOW / best_of(run, 2)})
    elif name == "rensa":
        from rensa import RMinHash

        texts = english_like_texts(N_DOCS)

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
    one = {"MDF_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1"}
    mdf1 = run_worker(__file__, "mdf", one)["docs_per_s"]
    ds = run_worker(__file__, "datasketch", one)["docs_per_s"]
    rensa = run_worker(__file__, "rensa", one)
    mdf2 = run_worker(__file__, "mdf", {"MDF_NUM_THREADS": "2"})
    print(f"minhash, {NUM_PERM} perms, word {NGRAM}-grams, ~2.5 KB texts, docs/s (single thread unless noted)")
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
