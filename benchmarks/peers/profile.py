"""Where a workload's instructions go, in mdf or in a peer: ``valgrind --tool=callgrind`` of the whole process
(children too: the peers' multiprocessing workers), then the inclusive instruction counts of the functions that
mark each phase (start-up imports, Parquet decode and encode, their zstd, the operator's kernel).

Instruction counts do not move with the machine's load, so two versions or two systems can be compared on a
busy machine; they do not show kernel time (page faults, copies into the page cache), which ``perf stat`` and
``/usr/bin/time``'s minor-fault count do. Slow: ~50x the run's CPU time, so use a small corpus (50 K).

    python benchmarks/peers/profile.py W1 mdf             # or polars, rensa, datasketch; --n 50000
    python benchmarks/peers/profile.py W1 mdf --pythonpath /tmp/old/core/src:...   # an older mdf
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from peers.venvs import DEFAULT_VENVS, DEFAULT_WORK, HERE, ensure_data, peer_root

# phase -> function names (callgrind_annotate's, regex); the largest inclusive count among a file's matches
PHASES = {
    "start-up: Python imports": r"Python/import\.c:PyImport_ImportModuleLevelObject ",
    "Parquet decode (all)": r"LeafReader::LoadBatch|polars_io::parquet::read::mmap::to_deserializer ",
    "  of it zstd decompress": r"ZSTD_decompress_usingDDict|ZSTD_decompressDCtx",
    "Parquet encode + write (all)": r"FileWriterImpl::WriteTable|RowGroupEncoder>::run::\{closure#0\}::"
    r"\{closure#0\}::\{closure#0\}::\{closure#0\} ",
    "  of it zstd compress": r"ZSTD_compress2 ",
    "filter / predicate": r"FilterMetaFunction::ExecuteImpl|ColumnPredicateExpr as .*>::try_evaluate ",
    "url host + blocklist": r"mdf_kernels::url::url_host |mdf_kernels::domains::|regex_automata::meta::regex::Regex>"
    r"::search_slots ",
    "text hash (W2)": r"mdf_kernels::hash::hash64_column |foldhash::hash_bytes_long",
    "MinHash signatures": r"mdf_kernels::minhash::MinHasher::signatures |rensa::",
    "memcpy (self)": None,
}


def callgrind(cmd: list[str], out: Path, env: dict[str, str]) -> list[Path]:
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.%p", "--trace-children=yes",
                    *cmd], env=env, check=True, capture_output=True)  # fmt: skip
    return [p for p in out.glob("cg.*") if p.stat().st_size > 0]


def phases(files: list[Path]) -> dict[str, int]:
    """Per phase, the sum over processes of the phase's largest inclusive count in each."""
    got = dict.fromkeys(["total", *PHASES], 0)
    for f in files:
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(f)],
                              capture_output=True, text=True).stdout  # fmt: skip
        self_text = subprocess.run(["callgrind_annotate", "--threshold=100", str(f)],
                                   capture_output=True, text=True).stdout  # fmt: skip
        total = re.search(r"^\s*([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text, re.M)
        got["total"] += int(total.group(1).replace(",", "")) if total else 0
        for name, pattern in PHASES.items():
            if pattern is None:
                m = re.search(r"^\s*([\d,]+) .*__memcpy_avx_unaligned_erms", self_text, re.M)
                got[name] += int(m.group(1).replace(",", "")) if m else 0
                continue
            counts = [int(m.group(1).replace(",", "")) for line in text.splitlines()
                      if "'" not in line.split("[")[0] and re.search(pattern, line)
                      for m in [re.match(r"\s*([\d,]+) ", line)] if m]  # fmt: skip
            got[name] += max(counts, default=0)
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload", choices=["W1", "W2", "W3"])
    ap.add_argument("system", help="mdf, or a shared peer's name (polars, duckdb, plain, datasketch, rensa)")
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--peer-venvs", type=Path, default=DEFAULT_VENVS)
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK)
    ap.add_argument("--pythonpath", help="PYTHONPATH for mdf (an older checkout's src folders, to compare)")
    args = ap.parse_args()
    work = args.work.resolve()
    data = ensure_data(work, args.n, args.peer_venvs)
    env = {**os.environ, "BENCH_CPUS": os.environ.get("BENCH_CPUS", "2")}
    if args.system == "mdf":
        cmd = [str(HERE / "mdf.sh")]
        if args.pythonpath:
            env["PYTHONPATH"] = args.pythonpath
    else:
        cmd = [str(peer_root(work, args.peer_venvs) / "peers" / args.system / "run.sh")]
    with tempfile.TemporaryDirectory(prefix="peers-profile-", dir=work) as tmp:
        files = callgrind([*cmd, args.workload, str(data), str(Path(tmp) / "run")], Path(tmp), env)
        got = phases(files)
    print(f"{args.system} {args.workload} on {args.n:,} records: instructions (callgrind, all processes)")
    for name, v in got.items():
        print(f"  {name:<30} {v / 1e9:7.2f} G  {100 * v / max(got['total'], 1):5.1f} %")


if __name__ == "__main__":
    main()
