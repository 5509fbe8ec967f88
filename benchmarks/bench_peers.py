"""mdf against the strongest form of each peer, the team's way: the shared peer programs of ``../shared/peers``,
their corpus, their verifier, their interleaved runner; one command, one table (issue 48's).

* W1 (URL blocklist + text length, Parquet -> Parquet), 200 K and 1 M records: ``polars`` (one lazy query, one
  anchored regex over the escaped blocklist, streaming sink), with ``--all-peers`` also ``duckdb`` and ``plain``.
* W2 (exact dedup on the text, first occurrence kept), 200 K: ``polars`` (``unique(keep='first',
  maintain_order=True)``), with ``--all-peers`` also ``duckdb`` and ``plain``.
* W3 (MinHash-LSH, 128 permutations, word 5-grams, 16 bands x 8 rows, keep-first), 50 K: ``datasketch`` and
  ``rensa``; recall must equal theirs (the verifier's figures are printed).
* W1 s3 -> s3, 200 K, SeaweedFS started here: mdf against the Polars query on ``scan_parquet``/``sink_parquet``
  with ``storage_options`` on the same server (``peers/s3.py``).
* Quality chain: DataTrove 0.10.1's Gopher repetition -> Gopher quality -> C4 -> FineWeb against mdf's four
  filters on every real text of ``../shared/data`` (``peers/quality.py``), one core each, whole process.
* URL domain kernel, one thread: ``mdf_kernels.url_verdicts`` (url_filter's) against ``urlsplit().hostname`` +
  a parent-domain set lookup (``bench_kernels_url.py``), on its generated URLs and on the W1 corpus's.

Every W1-W3 figure is ``peer_run.py``'s: each system a whole process (interpreter start, imports, the write),
run interleaved A B A B ..., ``BENCH_CPUS=2`` threads for every peer, medians; mdf runs as ``peers/mdf.sh``
(``mdf run -q`` of a recipe written by bash). The first output of each system is checked by ``verify.py``.

Before timing, the peer venvs and mdf's are compiled to bytecode (``peers/venvs.py`` says why). Peer venvs are
made on first use under ``--peer-venvs`` (default ``benchmarks/.venv-peers``), the corpora under ``--work``
(default ``benchmarks/.data/peers``); both are git-ignored.

    python benchmarks/bench_peers.py                      # everything, --reps 5 (1 M and S3: --reps-big 3)
    python benchmarks/bench_peers.py --only w1,w3 --reps 3 --peer-venvs /work/peer-venvs
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers.venvs import DEFAULT_VENVS, DEFAULT_WORK, HERE, compile_mdf, ensure_data, ensure_venvs, peer_root

CASES = ("w1", "w1-1m", "w2", "w3", "s3", "quality", "url")
# case: (workload, records, {peer: target ratio of mdf's speed to the peer's})
TARGETS = {
    "w1": ("W1", 200_000, {"polars": 1.1}),
    "w1-1m": ("W1", 1_000_000, {"polars": 1.2}),
    "w2": ("W2", 200_000, {"polars": 1.1}),
    "w3": ("W3", 50_000, {"datasketch": 20.0, "rensa": 6.0}),
}
EXTRA = {"W1": ["duckdb", "plain"], "W2": ["duckdb", "plain"], "W3": []}


def peer_run(work: Path, root: Path, wl: str, n: int, reps: int, peers: list[str]) -> dict:
    """``peer_run.py`` with mdf first, then ``peers``; its JSON line."""
    from peers.venvs import shared_peers

    cmds = [f"mdf={HERE / 'mdf.sh'}"] + [f"{p}={root / 'peers' / p / 'run.sh'}" for p in peers]
    env = {**os.environ, "WORK": str(work), "BENCH_CPUS": os.environ.get("BENCH_CPUS", "2")}
    done = subprocess.run([sys.executable, str(shared_peers() / "peer_run.py"), wl, str(n), str(reps), *cmds],
                          env=env, capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"peer_run.py {wl} {n} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def verdict(ratio: float | None, target: float) -> str:
    return "n/a" if ratio is None else ("met" if ratio >= target else "NOT met")


def fmt_verify(v: dict | None) -> str:
    if not v:
        return "no verify"
    if "recall" in v:
        return f"recall {v['recall']}, precision {v['precision']}"
    return f"errors {v.get('errors')}"


def main() -> None:
    ap = argparse.ArgumentParser(description="mdf vs the team's shared peers: issue 48's table")
    ap.add_argument("--only", default=",".join(CASES), help="comma-separated subset of " + ",".join(CASES))
    ap.add_argument("--reps", type=int, default=5, help="interleaved runs per system (W1, W2, W3 200 K / 50 K)")
    ap.add_argument("--reps-big", type=int, default=3, help="interleaved runs for W1 1 M, S3 and the quality chain")
    ap.add_argument("--peer-venvs", type=Path, default=DEFAULT_VENVS, help="root of the peers' venvs (made if missing)")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="scratch: corpora and runs")
    ap.add_argument("--all-peers", action="store_true", help="W1/W2: also the duckdb and plain peers")
    args = ap.parse_args()
    only = args.only.split(",")
    unknown = set(only) - set(CASES)
    if unknown:
        raise SystemExit(f"--only: unknown case(s) {sorted(unknown)}; choose from {','.join(CASES)}")
    work = args.work.resolve()
    names = sorted({p for c in only if c in TARGETS for p in TARGETS[c][2]} | ({"polars"} if "s3" in only else set())
                   | ({"plain"} if set(only) & {"w1", "w1-1m", "w2", "w3", "s3"} else set())
                   | ({"duckdb", "plain"} if args.all_peers else set()))  # fmt: skip
    ensure_venvs(args.peer_venvs, names)
    compile_mdf()
    root = peer_root(work, args.peer_venvs)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{time.strftime('%Y-%m-%d %H:%M')}  {os.cpu_count()} CPUs, load average {load} at the start", flush=True)

    rows = []  # (workload, peer, peer rec/s, mdf rec/s, ratio, target, check)
    for case in only:
        if case in TARGETS:
            wl, n, targets = TARGETS[case]
            ensure_data(work, n, args.peer_venvs)
            peers = list(targets) + (EXTRA[wl] if args.all_peers else [])
            reps = args.reps_big if n >= 1_000_000 else args.reps
            print(f"{case}: {wl} {n:,} records, {reps} interleaved runs of mdf, {', '.join(peers)} ...", flush=True)
            res = peer_run(work, root, wl, n, reps, peers)
            mine = res["peers"]["mdf"]
            if "error" in mine:
                raise SystemExit(f"mdf failed on {wl}: {mine['error']}")
            for p in peers:
                theirs = res["peers"][p]
                ratio = res["speedup"].get(f"mdf/{p}")
                check = f"mdf {fmt_verify(mine.get('verify'))}; {p} {fmt_verify(theirs.get('verify'))}"
                rows.append((f"{wl} {n // 1000:,} K", p, theirs.get("rec_per_s"), mine.get("rec_per_s"), ratio,
                             targets.get(p), check))  # fmt: skip
            print("  " + json.dumps({k: v.get("walls") for k, v in res["peers"].items()}), flush=True)
        elif case == "s3":
            from peers.s3 import run_s3

            data = ensure_data(work, 200_000, args.peer_venvs)
            print(f"s3: W1 200,000 records s3 -> s3 on SeaweedFS, {args.reps_big} interleaved runs ...", flush=True)
            res = run_s3(data, args.reps_big, args.peer_venvs, work)
            m, p = res["mdf"], res["polars"]
            for name, d in res.items():
                if "error" in d:
                    raise SystemExit(f"{name} failed on S3: {d['error']}")
            ratio = round(p["wall_med"] / m["wall_med"], 2)
            check = (f"mdf {fmt_verify(m.get('verify'))}, server CPU {m['server_cpu_med']} s; polars "
                     f"{fmt_verify(p.get('verify'))}, server CPU {p['server_cpu_med']} s")  # fmt: skip
            rows.append(("W1 200 K s3 -> s3", "polars (storage_options)", p["rec_per_s"], m["rec_per_s"], ratio, 1.0,
                         check))  # fmt: skip
            print("  " + json.dumps({k: v["walls"] for k, v in res.items()}), flush=True)
        elif case == "quality":
            from peers.quality import run_chain

            print(f"quality: FineWeb chain, DataTrove vs mdf, {args.reps_big} interleaved runs, one core ...",
                  flush=True)  # fmt: skip
            res = run_chain(args.reps_big)
            d, m, n = res["datatrove"], res["mdf"], res["texts"]
            ratio = round(d["whole_med"] / m["whole_med"], 1)
            check = (f"filter-only {d['filter_med'] / m['filter_med']:.0f}x; keep agreement "
                     f"{res['keep_agreement']:.2f} %")  # fmt: skip
            rows.append((f"quality chain, {n:,} real texts", "DataTrove 0.10.1", round(n / d["whole_med"]),
                         round(n / m["whole_med"]), ratio, 50.0, check))  # fmt: skip
        elif case == "url":
            from bench_kernels_url import run_worker

            script = str(Path(__file__).resolve().parent / "bench_kernels_url.py")
            corpus = ensure_data(work, 200_000, args.peer_venvs)
            for label, extra in (("generated URLs", {}), ("W1 200 K corpus", {"BENCH_URL_CORPUS": str(corpus)})):
                one = {"MDF_NUM_THREADS": "1", **extra}
                mdf, py = run_worker(script, "mdf", one), run_worker(script, "python", one)
                ratio = round(mdf["urls_per_s"] / py["urls_per_s"], 1)
                check = f"same {mdf['blocked']:,} of {mdf['urls']:,} blocked: {mdf['blocked'] == py['blocked']}"
                rows.append((f"url domain kernel, 1 thread, {label}", "urllib + set", round(py["urls_per_s"]),
                             round(mdf["urls_per_s"]), ratio, 20.0, check))  # fmt: skip
    print_table(rows)
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


def print_table(rows: list) -> None:
    print("\n| workload | peer | peer rec/s | mdf rec/s | mdf / peer | target | | check |")
    print("|---|---|---|---|---|---|---|---|")
    for wl, peer, theirs, mine, ratio, target, check in rows:
        tgt = f">= {target:g}x" if target else ""
        ok = verdict(ratio, target) if target else ""
        r = f"{ratio:.2f}x" if ratio is not None else "n/a"
        print(f"| {wl} | {peer} | {rate(theirs)} | {rate(mine)} | {r} | {tgt} | {ok} | {check} |")


def rate(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.0f}"


if __name__ == "__main__":
    main()
