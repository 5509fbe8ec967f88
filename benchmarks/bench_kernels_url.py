"""domain_blocked(url_host(urls)) vs a Python loop of urllib.parse.urlsplit(...).hostname plus
a parent-domain set lookup.

Run: python benchmarks/bench_kernels_url.py
"""

from __future__ import annotations

import random
import sys
import urllib.parse

from bench_kernels_common import best_of, emit, run_worker, worker_name

N_URLS = 500_000
N_BLOCKED = 50_000


def data():
    rng = random.Random(1)
    tlds = ["com", "org", "net", "de", "co.uk", "io", "fr"]
    domains = [f"site{i}.{rng.choice(tlds)}" for i in range(200_000)]
    blocked = rng.sample(domains, N_BLOCKED)
    urls = []
    for i in range(N_URLS):
        sub = rng.choice(["", "www.", "blog.", "a.b.", "cdn."])
        scheme = rng.choice(["https", "http"])
        urls.append(f"{scheme}://{sub}{rng.choice(domains)}/path/{i}?q={i % 97}#frag")
    return urls, blocked


def py_blocked(url, blocked):
    host = urllib.parse.urlsplit(url).hostname
    if host is None:
        return None
    parts = host.rstrip(".").split(".")
    return any(".".join(parts[i:]) in blocked for i in range(len(parts)))


def worker(name: str) -> None:
    urls, blocked = data()
    if name == "mdf":
        import pyarrow as pa

        import mdf_kernels as mk

        arr = pa.array(urls)
        ds = mk.DomainSet(blocked)
        secs = best_of(lambda: mk.domain_blocked(mk.url_host(arr), ds))
        host_secs = best_of(lambda: mk.url_host(arr))
        n_blocked = mk.domain_blocked(mk.url_host(arr), ds).to_pylist().count(True)
        emit({"urls_per_s": N_URLS / secs, "host_urls_per_s": N_URLS / host_secs, "blocked": n_blocked})
    else:
        bset = set(blocked)
        sample = urls[:100_000]
        secs = best_of(lambda: [py_blocked(u, bset) for u in sample], 2)
        n_blocked = sum(bool(py_blocked(u, bset)) for u in urls)
        emit({"urls_per_s": len(sample) / secs, "blocked": n_blocked})


def main() -> None:
    one = {"MDF_NUM_THREADS": "1"}
    mdf = run_worker(__file__, "mdf", one)
    py = run_worker(__file__, "python", one)
    assert mdf["blocked"] == py["blocked"], (mdf["blocked"], py["blocked"])
    print(f"domain_blocked(url_host(urls)), {N_BLOCKED:,} blocked domains, single thread")
    print(
        f"  mdf_kernels            {mdf['urls_per_s']:14,.0f} URLs/s (url_host alone {mdf['host_urls_per_s']:,.0f} URLs/s)"
    )
    print(f"  urllib + set lookups   {py['urls_per_s']:14,.0f} URLs/s")
    print(
        f"  ratio                  {mdf['urls_per_s'] / py['urls_per_s']:14.1f}x   (same {mdf['blocked']:,} URLs blocked by both)"
    )


if __name__ == "__main__":
    name = worker_name()
    worker(name) if name else main()
    sys.exit(0)
