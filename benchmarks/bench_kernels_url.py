"""url_filter's kernel, url_verdicts(urls) (host, its checks and the parent-domain walk in one pass; what
url_filter runs), and the two-kernel form it replaced, domain_blocked(url_host(urls)), vs a Python loop of
urllib.parse.urlsplit(...).hostname plus a parent-domain set lookup.

Run: python benchmarks/bench_kernels_url.py [PEERS_DATA_DIR]

With a folder of the team's peer corpus (``../shared/peers/gen.py``'s output: ``parquet/*.parquet`` and
``blocklist.txt``), the URLs and the blocklist are that corpus's instead of the generated ones below.
"""

from __future__ import annotations

import glob
import os
import random
import sys
import urllib.parse

from bench_kernels_common import best_of, emit, run_worker, worker_name

N_URLS = 500_000
N_BLOCKED = 50_000


def data():
    corpus = os.environ.get("BENCH_URL_CORPUS")
    if corpus:
        import pyarrow.parquet as pq

        files = sorted(glob.glob(os.path.join(corpus, "parquet", "*.parquet")))
        urls = [u for f in files for u in pq.read_table(f, columns=["url"]).column("url").to_pylist()][:N_URLS]
        with open(os.path.join(corpus, "blocklist.txt")) as f:
            return urls, [line.strip().lower() for line in f if line.strip() and not line.startswith("#")]
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
        secs = best_of(lambda: mk.url_verdicts(arr, ds))
        pair_secs = best_of(lambda: mk.domain_blocked(mk.url_host(arr), ds))
        host_secs = best_of(lambda: mk.url_host(arr))
        n_blocked = mk.url_verdicts(arr, ds).to_pylist().count(2)
        assert n_blocked == mk.domain_blocked(mk.url_host(arr), ds).to_pylist().count(True)
        n = len(urls)
        emit({"urls_per_s": n / secs, "pair_urls_per_s": n / pair_secs, "host_urls_per_s": n / host_secs,
              "blocked": n_blocked, "urls": n})  # fmt: skip
    else:
        bset = set(blocked)
        sample = urls[:100_000]
        secs = best_of(lambda: [py_blocked(u, bset) for u in sample], 2)
        n_blocked = sum(bool(py_blocked(u, bset)) for u in urls)
        emit({"urls_per_s": len(sample) / secs, "blocked": n_blocked})


def main() -> None:
    one = {"MDF_NUM_THREADS": "1"}
    if len(sys.argv) > 1:
        one["BENCH_URL_CORPUS"] = sys.argv[1]
    mdf = run_worker(__file__, "mdf", one)
    py = run_worker(__file__, "python", one)
    assert mdf["blocked"] == py["blocked"], (mdf["blocked"], py["blocked"])
    print(f"url_verdicts(urls), {mdf['urls']:,} URLs, single thread")
    print(f"  mdf_kernels            {mdf['urls_per_s']:14,.0f} URLs/s")
    print(
        f"  domain_blocked(url_host) {mdf['pair_urls_per_s']:12,.0f} URLs/s (url_host alone {mdf['host_urls_per_s']:,.0f})"
    )
    print(f"  urllib + set lookups   {py['urls_per_s']:14,.0f} URLs/s")
    print(
        f"  ratio                  {mdf['urls_per_s'] / py['urls_per_s']:14.1f}x   (same {mdf['blocked']:,} URLs blocked by both)"
    )


if __name__ == "__main__":
    name = worker_name()
    worker(name) if name else main()
    sys.exit(0)
