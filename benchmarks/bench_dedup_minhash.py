"""Near-duplicate removal, Parquet -> Parquet: mdf ``minhash_dedup`` vs datasketch and rensa as users write them.

Input: ``mdf.demo_data.dedup_table`` - 50,000 independent CommonCrawl-like pages (~2.5 KB), of which 10 % are
exact copies and 10 % near copies (3 % of words replaced) of an earlier-or-later original, with a ground-truth
``group`` column; 4 zstd files cached under ``benchmarks/.data/``. Every system does the whole job on the same
files - read the Parquet, sign every text (128 permutations over word 5-gram shingles), LSH-band, drop a row
whose band an earlier row holds, write the kept rows as zstd Parquet - as its own subprocess, timed wall-clock
from launch to exit (start-up and imports count); rec/s = input rows / wall seconds; best of ``--repeat`` runs,
round-robin.

* **mdf** - ``mdf run -q recipe.yaml``: parquet reader, ``minhash_dedup`` (streaming mode), parquet writer;
  inline executor, and the Ray executor (a local Ray started by the run; its start-up counts).
* **datasketch / rensa** - ``dedup/minhash_peers.py``: pyarrow read, Python shingling, the library's MinHash and
  LSH with streaming query-then-insert, pyarrow write. See that file for the exact calls.

Fairness: one threshold for all (``--threshold``); mdf and datasketch pick the same bands x rows for it
(datasketch's optimum; mdf copies that rule), rensa gets those bands and rows explicitly (it needs num_perm
divisible by bands, so it computes ``bands*rows`` <= 128 permutations - a small advantage to rensa). The
planted near pairs have a 5-gram Jaccard of ~0.70-0.79 (printed), so at threshold 0.8 every LSH misses most of
them; the default 0.6 is below that range. Hash functions differ between libraries, so kept rows differ a
little; precision/recall are computed per ground-truth group for each (``dedup/common.py``). mdf's kernels use
both cores (Rayon); the peers' Python loops use one (rensa's bulk signer may use more).
On Ray, batches of different shards race, so which row of a near-duplicate chain arrives first - and with
several band keys per row, how many rows are kept - can differ a little between runs (printed when it does).

Run from the repository root with mdf's venv active (once: ``uv pip install -r benchmarks/dedup/requirements-peers.txt``):

    python benchmarks/bench_dedup_minhash.py     # --rows 50000 --threshold 0.6 --repeat 2 --skip-ray --skip-datasketch
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fixed_cost import fixed_cost_line
from dedup.common import HERE, dedup_dataset, load_line, mdf_system, precision_recall, read_input, run_all, timed
from dedup.minhash_peers import shingles

TARGETS = {"datasketch": 20.0, "rensa": 4.0}  # mdf inline rec/s >= N x the peer's (issue 16)
MIN_RECALL, MIN_PRECISION = 0.88, 0.999


def planted_jaccard(paths: list[str], ngram: int) -> np.ndarray:
    """Exact shingle-set Jaccard of every planted near copy with its original (any non-near row of its group)."""
    t = read_input(paths, ["text", "group", "near"])
    texts, groups, near = t.column("text").to_pylist(), t.column("group").to_pylist(), t.column("near").to_pylist()
    original = {g: i for i, (g, n) in enumerate(zip(groups, near, strict=True)) if not n}
    out = []
    for i, (g, n) in enumerate(zip(groups, near, strict=True)):
        if n and g in original:
            a, b = set(shingles(texts[i], ngram)), set(shingles(texts[original[g]], ngram))
            out.append(len(a & b) / max(len(a | b), 1))
    return np.array(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--threshold", type=float, default=0.6, help="Jaccard threshold for every system (try 0.8)")
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--ngram", type=int, default=5)
    ap.add_argument("--change-rate", type=float, default=0.03, help="share of words replaced in near copies")
    ap.add_argument("--repeat", type=int, default=2, help="runs per system; the fastest counts")
    ap.add_argument("--bands", type=int, default=16, help="LSH bands for every system (0: the threshold's optimum)")
    ap.add_argument("--band-rows", type=int, default=8, help="rows per band for every system")
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--skip-datasketch", action="store_true")
    args = ap.parse_args()

    from mdf_kernels import optimal_bands_rows

    files = dedup_dataset(args.rows, args.files, 0.10, 0.10, args.change_rate, seed=11)
    truth = read_input(files, ["id", "group", "near"])
    rows = truth.num_rows
    bands, brows = (args.bands, args.band_rows) if args.bands else optimal_bands_rows(args.threshold, args.num_perm)
    jac = planted_jaccard(files, args.ngram)
    q = np.percentile(jac, [0, 10, 50, 90, 100])
    print(f"MinHash dedup on {rows:,} rows in {len(files)} files, {os.cpu_count()} CPUs, load average {load_line()}")
    print(
        f"planted near pairs: {len(jac):,}, word {args.ngram}-gram Jaccard min/p10/median/p90/max = "
        + "/".join(f"{x:.3f}" for x in q)
        + f"; {np.mean(jac >= args.threshold):.1%} >= threshold {args.threshold}"
    )
    for s in (q[0], q[2]):
        p = 1 - (1 - s**brows) ** bands
        print(f"  P(LSH {bands}x{brows} finds a pair of Jaccard {s:.3f}) = {p:.3f}")
    print(f"wall seconds per run, systems interleaved (the best of {args.repeat} counts):")

    op = {"minhash_dedup": {"threshold": args.threshold, "num_perm": args.num_perm, "ngram": args.ngram}}
    if args.bands:
        op["minhash_dedup"].update(bands=bands, rows=brows)

    def peer(system: str):
        def run(tmp: Path):
            cmd = [sys.executable, str(HERE / "minhash_peers.py"), system, *files, "--out", str(tmp / "out")]
            cmd += ["--threshold", str(args.threshold), "--num-perm", str(args.num_perm), "--ngram", str(args.ngram)]
            cmd += ["--bands", str(bands), "--rows", str(brows), *(["--fixed-bands"] if args.bands else [])]
            wall = timed(cmd, tmp / "log")
            return wall, tmp / "out", json.loads((tmp / "log").read_text().strip().splitlines()[-1])

        return run

    systems = {"mdf minhash_dedup (inline)": mdf_system(files, op, "inline")}
    systems["mdf minhash_dedup (inline, 1 worker)"] = mdf_system(files, op, "inline", workers=1)
    if not args.skip_ray:
        systems["mdf minhash_dedup (ray)"] = mdf_system(files, op, "ray")
    systems["rensa RMinHashLSH"] = peer("rensa-lsh")
    systems["rensa RMinHashDeduplicator"] = peer("rensa-dedup")
    if not args.skip_datasketch:
        systems["datasketch MinHashLSH"] = peer("datasketch")
    deterministic = tuple(name for name in systems if "(ray)" not in name)  # Ray batches race: see below
    mdf, *others = run_all(args.repeat, systems, strict=deterministic)

    print()
    print(
        f"threshold {args.threshold}, word {args.ngram}-grams; mdf bands x rows = {bands} x {brows} of {args.num_perm}"
    )
    head = f"{'system':<30} {'wall s':>7} {'rec/s':>8} {'kept':>7} {'removed':>7} {'precision':>9} {'recall':>6} {'mdf/peer':>8}  banding"
    print(head)
    for r in (mdf, *others):
        prec, rec, removed = precision_recall(truth, r.kept)
        r.extra.update(precision=prec, recall=rec)
        ratio = f"{r.wall_s / mdf.wall_s:7.2f}x" if r is not mdf else ""
        band = (
            f"{r.extra['bands']}x{r.extra['rows']} of {r.extra['num_perm']}"
            if "bands" in r.extra
            else f"{bands}x{brows}"
        )
        print(
            f"{r.system:<30} {r.wall_s:7.2f} {rows / r.wall_s:8,.0f} {len(r.kept):7,} {removed:7,} {prec:9.4f} {rec:6.3f} {ratio:>8}  {band}"
        )
    print()
    for r in others:
        phases = {k: round(v, 2) for k, v in r.extra.items() if k.endswith("_s")}
        if phases:
            print(f"{r.system}: phases (s) {phases}")
    print(f"mdf inline: {mdf.extra['executor_s']:.2f} s in the executor of {mdf.wall_s:.2f} s wall")
    print(fixed_cost_line())  # beside the rates: a run's fixed cost, so it is never read as a per-record one
    for r in (mdf, *others):
        if len(set(r.kept_runs)) > 1:  # streaming on Ray: which row of a near-duplicate chain comes first varies
            print(f"{r.system}: kept rows differ between runs {r.kept_runs} (the fastest run's are scored)")

    print()
    ok = mdf.extra["recall"] >= MIN_RECALL and mdf.extra["precision"] >= MIN_PRECISION
    print(f"target mdf recall >= {MIN_RECALL} and precision >= {MIN_PRECISION}: {'met' if ok else 'NOT met'}")
    for prefix, factor in TARGETS.items():
        peers = [r for r in others if r.system.startswith(prefix)]
        if peers:
            fastest = min(peers, key=lambda r: r.wall_s)
            ratio = fastest.wall_s / mdf.wall_s
            print(
                f"target mdf >= {factor:g}x {fastest.system}: {ratio:.2f}x -> {'met' if ratio >= factor else 'NOT met'}"
            )
    print(f"load average (1, 5, 15 min) at the end: {load_line()}")


if __name__ == "__main__":
    main()
