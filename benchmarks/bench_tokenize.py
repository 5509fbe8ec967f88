"""Parquet text -> token ids -> Megatron shards, whole process: mdf against DataTrove and a tokenizers script.

Three programs on the same Parquet files with the same tokenizer (a byte-level BPE this script trains on the data,
``<|endoftext|>`` after each document), each a fresh process timed from start to exit, run interleaved
(A B C A B C ...) ``--repeat`` times:

* mdf: ``mdf run`` of a recipe ``parquet -> tokenize -> megatron``;
* DataTrove 0.10.1: its ``ParquetReader`` and ``DocumentTokenizer`` (shuffling off; it writes its own ``.ds`` token
  files: it has no Megatron writer), one task, one worker;
* a script calling ``tokenizers``' ``encode_batch_fast`` on each batch and writing the same Megatron files mdf
  writes (``tokenize/peer_encode_batch.py``; the script checks they are byte-identical to mdf's).

One core each (``taskset -c 0``, ``MDF_NUM_THREADS=1``, ``RAYON_NUM_THREADS=1``); ``--scaling`` also runs mdf on two
cores (``taskset -c 0,1``) against one; ``--memory`` runs mdf on the data and on the data repeated ten times and
prints both peak RSS (memory must stay flat). Prints each time and the ratios.

The peers live in ``benchmarks/.venv-tokenize`` (created on first run from ``tokenize/requirements-peers.txt``).
The data: the texts of ``../shared/data``, each once, the first ``--mb`` megabytes of them: clean texts (AEB article
bodies, trafilatura's evaluation snippets, Readability's expected articles with their tags removed), then the raw
pages as crawled (HTML decoded as UTF-8), so no run sees a text twice (repeated text would flatter the tokenizers'
word caches); the demo generator's pages where ``../shared/data`` is absent.

Run from the repository root with mdf's venv active:
``python benchmarks/bench_tokenize.py --mb 50 --repeat 3 [--scaling] [--memory]``.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "benchmarks"
VENV = HERE / ".venv-tokenize"
PEER = VENV / "bin" / "python"
DATA = HERE / ".data" / "tokenize"
SHARED = ROOT.parent / "shared" / "data"
EOS = "<|endoftext|>"
BATCH_ROWS = 4096


def ensure_venv() -> None:
    if PEER.exists():
        return
    req = HERE / "tokenize" / "requirements-peers.txt"
    print(f"creating {VENV} from {req} ...", flush=True)
    if shutil.which("uv"):
        subprocess.run(["uv", "venv", "-q", "-p", "3.11", str(VENV)], check=True)
        subprocess.run(
            ["uv", "pip", "install", "-q", "-r", str(req)], check=True, env={**os.environ, "VIRTUAL_ENV": str(VENV)}
        )
    else:
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(PEER), "-m", "pip", "install", "-q", "-r", str(req)], check=True)


def real_documents() -> list[str]:
    """The texts of ../shared/data, each once: clean texts first (what a FineWeb-style recipe keeps: AEB article
    bodies, trafilatura's evaluation snippets in groups, Readability's expected articles with their tags removed),
    then the raw pages as crawled (HTML, decoded as UTF-8), so a run sees text it has not seen before (a tokenizer's
    caches would flatter repeated text)."""
    import gzip

    docs = [v["articleBody"] for v in json.loads((SHARED / "aeb" / "ground-truth.json").read_text()).values()]
    evaldata = json.loads((SHARED / "trafeval-dev" / "tests" / "evaldata.json").read_text())
    snippets = [s for item in evaldata.values() for s in item.get("with", []) if isinstance(s, str)]
    docs += ["\n".join(snippets[i : i + 8]) for i in range(0, len(snippets), 8)]
    tag = re.compile(r"<[^>]+>")
    pages = sorted((SHARED / "readability-pages").glob("*/expected.html"))
    for page in pages:
        docs.append(re.sub(r"\n\s*\n+", "\n\n", tag.sub("", page.read_text(errors="replace"))).strip())
    raw = [*sorted((SHARED / "aeb" / "html").glob("*.html.gz")), *sorted((SHARED / "trafeval-dev" / "tests").glob("*/*")),
           *sorted((SHARED / "readability-pages").glob("*/source.html"))]  # fmt: skip
    for path in raw:
        data = path.read_bytes()
        docs.append((gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8", errors="replace"))
    return [d for d in dict.fromkeys(docs) if d and len(d) > 50]


def make_data(mb: int, files: int = 4) -> Path:
    """``files`` Parquet files of about ``mb`` MB of text in all (cached under benchmarks/.data)."""
    out = DATA / f"{mb}mb"
    if (out / "done").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    (out / "in").mkdir(parents=True)
    if SHARED.is_dir():
        base = real_documents()
    else:
        from mdf.demo_data import DemoSpec, make_table

        base = [t for t in make_table(DemoSpec(rows=20_000)).column("text").to_pylist() if t]
    texts, size, want = [], 0, mb * 1_000_000
    while size < want:  # each text once, unless --mb asks for more than there is (131 MB)
        for d in base:
            texts.append(d)
            size += len(d.encode())
            if size >= want:
                break
    per = -(-len(texts) // files)
    for k in range(files):
        part = texts[k * per : (k + 1) * per]
        table = pa.table({"id": [f"d{k}-{i}" for i in range(len(part))], "text": part})
        pq.write_table(table, out / "in" / f"part-{k:02d}.parquet", row_group_size=10_000, compression="zstd")
    from mdf_tokens.train import train

    train([str(out / "in")], str(out / "tokenizer.json"), vocab_size=32_000, max_chars=20_000_000)
    (out / "done").write_text("")
    return out


def run_child(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + sys) and peak RSS (KiB) of one whole process, measured with wait4."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(cmd[:6])} failed:\n{err[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def recipe(data: Path, out: Path) -> Path:
    path = out.parent / f"{out.name}.yaml"
    spec = {
        "reader": {"type": "parquet", "paths": [str(data / "in")], "columns": ["id", "text"]},
        "stages": [
            {
                "name": "tokenize",
                "operators": [{"tokenize": {"tokenizer": str(data / "tokenizer.json"), "add_eos": EOS}}],
            }
        ],
        "writer": {"type": "megatron", "path": str(out)},
        "executor": {"type": "inline", "batch_rows": BATCH_ROWS},
    }
    path.write_text(json.dumps(spec))
    return path


def mdf_cmd(data: Path, out: Path, cores: str) -> list[str]:
    exe = Path(sys.executable).with_name("mdf")
    return ["taskset", "-c", cores, str(exe), "run", "-q", "--overwrite", str(recipe(data, out))]


def env_for(threads: int) -> dict[str, str]:
    return {**os.environ, "MDF_NUM_THREADS": str(threads), "RAYON_NUM_THREADS": str(threads),
            "TOKENIZERS_PARALLELISM": "true"}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-datatrove", action="store_true")
    ap.add_argument("--scaling", action="store_true", help="also mdf on 2 cores vs 1")
    ap.add_argument("--memory", action="store_true", help="also mdf's peak RSS on the data and on 10x the data")
    ap.add_argument("--check-ids", action="store_true", help="only: ids vs encode_batch on every whole real text")
    args = ap.parse_args()
    if args.check_ids:
        check_ids()
        return
    ensure_venv()
    data = make_data(args.mb)
    work = DATA / "runs"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    tok, one = str(data / "tokenizer.json"), env_for(1)

    def peer(script: str) -> Callable[[Path], list[str]]:
        return lambda out: ["taskset", "-c", "0", str(PEER), str(HERE / "tokenize" / script), str(data / "in"),
                            str(out), tok, EOS, str(BATCH_ROWS)]  # fmt: skip

    sides: dict[str, Callable[[Path], list[str]]] = {
        "mdf": lambda out: mdf_cmd(data, out, "0"),
        "encode_batch": peer("peer_encode_batch.py"),
    }
    if not args.skip_datatrove:
        sides["datatrove"] = peer("peer_datatrove.py")
    if args.scaling:
        sides["mdf_2cores"] = lambda out: mdf_cmd(data, out, "0,1")
    times: dict[str, list[float]] = {k: [] for k in sides}
    cpu: dict[str, list[float]] = {k: [] for k in sides}
    for r in range(args.repeat):
        for name, make in sides.items():
            out = work / f"{name}-{r}"
            wall, used, rss = run_child(make(out), env_for(2) if name == "mdf_2cores" else one)
            times[name].append(wall)
            cpu[name].append(used)
            print(f"  round {r + 1} {name:>13}: {wall:7.2f} s wall, {used:7.2f} CPU-s, peak RSS {rss / 1024:,.0f} MiB",
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
    mdf_out, peer_out = work / "mdf-0", work / "encode_batch-0"
    same = all(
        filecmp.cmp(p, mdf_out / p.name, shallow=False)
        for p in sorted(peer_out.glob("*.*"))
        if p.suffix in (".bin", ".idx")
    )
    tokens = sum((p.stat().st_size // 2) for p in mdf_out.glob("*.bin"))
    mb = sum(p.stat().st_size for p in (data / "in").glob("*.parquet")) / 1e6
    best, best_cpu = {k: min(v) for k, v in times.items()}, {k: min(v) for k, v in cpu.items()}
    print(f"\ndata: {args.mb} MB of text ({mb:.1f} MB Parquet), {tokens:,} tokens; load {os.getloadavg()[0]:.1f}")
    print(f"mdf Megatron files byte-identical to the encode_batch script's: {'yes' if same else 'NO'}")
    for name, t in best.items():
        print(f"  {name:>13}: best {t:7.2f} s wall ({tokens / t / 1e6:5.2f} M tokens/s), {best_cpu[name]:7.2f} CPU-s")
    # one core each: the same work measured as wall time and as CPU time (on a loaded machine the CPU time is the
    # fairer of the two: a process's wall there depends on what else the scheduler runs)
    for peer, label in (("encode_batch", "encode_batch script"), ("datatrove", "DataTrove DocumentTokenizer")):
        if peer in best:
            print(f"mdf / {label} (one core): {best[peer] / best['mdf']:.2f}x wall, "
                  f"{best_cpu[peer] / best_cpu['mdf']:.2f}x CPU")  # fmt: skip
    if "mdf_2cores" in best:
        print(f"mdf 2 cores / 1 core: {best['mdf'] / best['mdf_2cores']:.2f}x wall")
    if args.memory:
        memory(data, work)


def check_ids() -> None:
    """The kernel's ids against tokenizers' encode_batch on every text of ../shared/data, whole (131 M characters:
    the tests compare each text's first 5,000 characters), with the tests' four tokenizers."""
    import numpy as np
    from tokenizers import Tokenizer

    import mdf_kernels

    sys.path.insert(0, str(ROOT / "plugins" / "mdf-tokens" / "tests"))
    from token_helpers import real_texts, train_tokenizers

    texts = real_texts()
    paths = train_tokenizers([t[:1_000] for t in texts[::4]], DATA / "check-ids")  # as the tests train them
    for name, path in paths.items():
        ref, ours, bad = Tokenizer.from_file(str(path)), mdf_kernels.TextTokenizer(str(path)), 0
        for at in range(0, len(texts), 200):
            chunk = texts[at : at + 200]
            got, _, _ = ours.encode(pa.array(chunk))
            offsets, values = got.offsets.to_numpy(), got.values.to_numpy()
            for i, enc in enumerate(ref.encode_batch(chunk)):
                bad += not np.array_equal(values[offsets[i] : offsets[i + 1]], np.asarray(enc.ids, np.uint32))
        chars = sum(map(len, texts))
        print(f"{name}: {len(texts):,} texts, {chars / 1e6:.1f} M characters, {bad} differ from encode_batch")


def memory(data: Path, work: Path) -> None:
    """mdf's peak RSS on the data and on ten times the data (ten times the files)."""
    big = DATA / f"{data.name}-x10"
    if not (big / "done").exists():
        shutil.rmtree(big, ignore_errors=True)
        (big / "in").mkdir(parents=True)
        for k in range(10):
            for p in sorted((data / "in").glob("*.parquet")):
                os.link(p, big / "in" / f"r{k}-{p.name}")
        shutil.copy(data / "tokenizer.json", big / "tokenizer.json")
        (big / "done").write_text("")
    for name, d in (("1x", data), ("10x", big)):
        wall, _, rss = run_child(mdf_cmd(d, work / f"mem-{name}", "0,1"), env_for(2))
        print(f"  memory {name:>3}: peak RSS {rss / 1024:,.0f} MiB ({wall:.1f} s)")


if __name__ == "__main__":
    main()
