"""``fasttext_classifier`` vs fastText's reference Python binding: same scores, speed on one core, scaling in
the pipeline, and the memory of a big model shared by a worker's threads.

Models are trained here (never downloaded) in ``benchmarks/.venv-fasttext``: fasttext-wheel 0.9.2 with numpy<2,
made with uv on first use (its ``predict`` fails under numpy 2, which mdf's venv has). The corpus: generated
articles in four languages (``mdf_text.demo_warc``) labelled ``hq`` and word salad with spam words labelled
``cc``; word bigrams; a small ``.bin``, its quantized ``.ftz``, and a big ``.bin`` of ``--big-mb`` MB.

* Equality: ``--texts`` texts (generated articles with newlines, non-Latin scripts, emoji-only, empty and
  whitespace-only, and a few of ``--long-chars`` characters): every label's probability from
  ``FastTextClassifier.refine`` vs the reference's ``model.predict(text.replace("\\n", " "), k=-1)`` (DCLM's
  preparation), within 1e-5, and the same top label, for the .bin and the .ftz.
* One core: both pinned to the same core (the kernel pool then has one thread), best of ``--repeat`` in CPU
  seconds: mdf on record batches of 1,024 texts (preparation in Arrow, then predict) vs the reference's predict
  loop, for each engine: ``native`` (mdf-kernels' Rust predict, the default) and ``fasttext`` (fastText's C++
  predict through its binding, one call per text).
* Pipeline: ``mdf run`` (Parquet in and out, fasttext_classifier + score_filter) pinned to one core with 1 worker
  (inline) or 1 replica (Ray) vs two cores with 2, the run's wall time from metrics.json, best of 2.
* Memory: RSS of a process before and after four operator instances in four threads score with the big model.

Run: python benchmarks/bench_fasttext.py [--texts 10000] [--repeat 3] [--big-mb 1024] [--pipeline-rows 40000]
     [--executors inline,ray] [--engines native,fasttext]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / ".data" / "fasttext"
VENV = ROOT / "benchmarks" / ".venv-fasttext"
REFERENCE = ROOT / "benchmarks" / "fasttext" / "reference.py"
# the reference venv sees only its own packages (a PYTHONPATH that puts another fastText first is mdf's side only)
REFERENCE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
SPAM = ("buy", "click", "free", "casino", "deal", "now", "cheap", "offer", "win", "bonus", "loan", "crypto")


def reference_python() -> str:
    """The reference venv's python (fasttext-wheel 0.9.2, numpy<2), made with uv on first use."""
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run(["uv", "venv", "-q", "-p", "3.11", str(VENV)], check=True)
        env = {**os.environ, "VIRTUAL_ENV": str(VENV)}
        subprocess.run(["uv", "pip", "install", "-q", "fasttext-wheel==0.9.2", "numpy<2"], check=True, env=env)
    return str(python)


def corpus(n: int, long_chars: int, seed: int = 1) -> list[str]:
    """Texts of every shape a crawl has: articles, non-Latin, emoji, empty, whitespace, very long."""
    from mdf_text.demo_warc import article

    rng = random.Random(seed)
    out: list[str] = []
    scripts = [(0x4E00, 0x9FFF), (0x0400, 0x04FF), (0x0600, 0x06FF), (0x0900, 0x097F), (0xAC00, 0xD7A3)]
    for i in range(n):
        kind = i % 20
        if kind == 0:
            lo, hi = scripts[i % len(scripts)]
            out.append(" ".join("".join(chr(rng.randint(lo, hi)) for _ in range(rng.randint(1, 6))) for _ in range(40)))
        elif kind == 1:
            out.append("".join(chr(rng.randint(0x1F300, 0x1F64F)) for _ in range(rng.randint(1, 30))))
        elif kind == 2:
            out.append(["", " ", "\n", "\n\n \t", "\r\n"][i % 5])
        elif kind == 3:
            out.append(" ".join(rng.choice([*SPAM, "the", "a", "best"]) for _ in range(rng.randint(5, 80))))
        else:
            out.append("\n\n".join(article(rng, ("en", "de", "fr", "es")[i % 4], rng.randint(1, 8))))
    for j in range(0, n, max(1, n // 5)):  # five very long texts
        out[j] = (out[j] + "\n") * (long_chars // max(1, len(out[j]) + 1) + 1)
    return out


def train_models(python: str, big_mb: int) -> dict[str, Path]:
    from mdf_text.demo_warc import article

    folder = DATA / f"models-{big_mb}"
    paths = {"bin": folder / "small.bin", "ftz": folder / "small.ftz", "big": folder / "big.bin"}
    if all(p.exists() for p in paths.values()):
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(3)
    lines = []
    for i in range(4000):
        text = " ".join(article(rng, ("en", "de", "fr", "es")[i % 4], 2)).replace("\n", " ")
        lines.append(f"__label__hq {text}")
        salad = text.split()
        rng.shuffle(salad)
        lines.append(f"__label__cc {' '.join(salad[:40] + rng.sample(list(SPAM), 4))}")
    rng.shuffle(lines)
    (folder / "train.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run(
        [python, str(REFERENCE), "train", str(folder), "--big-mb", str(big_mb)], check=True, env=REFERENCE_ENV
    )
    return paths


def pin_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def mdf_scores(
    model: Path, texts: list[str], repeat: int, engine: str
) -> tuple[np.ndarray, list[str], list[str], float]:
    from mdf_text.ops.fasttext_classifier import FastTextClassifier

    op = FastTextClassifier(model=str(model), top_label="top", engine=engine)
    op.ensure_setup()
    batches = [pa.RecordBatch.from_pydict({"text": texts[i : i + 1024]}) for i in range(0, len(texts), 1024)]
    out = [op.refine(b) for b in batches]
    names = op.output_columns()
    probs = np.column_stack([np.concatenate([b.column(c).to_numpy() for b in out]) for c in names])
    top = [x for b in out for x in b.column("top").to_pylist()]
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        for b in batches:
            op.refine(b)
        best = min(best, time.process_time() - t)
    return probs, [n.removeprefix("fasttext_") for n in names], top, best


def compare(python: str, model: Path, texts: list[str], repeat: int, tag: str) -> None:
    texts_path = DATA / "texts.jsonl"
    with open(texts_path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(t) + "\n" for t in texts)
    out = DATA / f"reference-{tag}"
    for stale in (Path(str(out) + ".npy"), Path(str(out) + ".json")):
        stale.unlink(missing_ok=True)
    cmd = [python, str(REFERENCE), "predict", str(model), str(texts_path), str(out), "--repeat", str(repeat)]
    subprocess.run(cmd, check=True, env=REFERENCE_ENV)
    ref_probs = np.load(str(out) + ".npy")
    ref = json.loads(Path(str(out) + ".json").read_text())
    for engine in engines():
        probs, labels, top, cpu = mdf_scores(model, texts, repeat, engine)
        assert labels == ref["labels"], (labels, ref["labels"])
        diff = float(np.max(np.abs(probs.astype(np.float64) - ref_probs)))
        same_top = sum(a == b.removeprefix("__label__") for a, b in zip(top, ref["top"], strict=True))
        ok = diff <= 1e-5 and same_top == len(texts)
        print(
            f"  {tag} [{engine}]: {len(texts):,} texts, max |p_mdf - p_ref| = {diff:.2e}, same top label "
            f"{same_top:,}/{len(texts):,} -> {'equal' if ok else 'DIFFERENT'}"
        )
        print(
            f"  {tag} [{engine}]: one core, mdf {len(texts) / cpu:,.0f} texts/s ({cpu:.3f} CPU s) vs reference "
            f"predict loop {len(texts) / ref['cpu_s']:,.0f} texts/s ({ref['cpu_s']:.3f}) -> mdf / reference = "
            f"{ref['cpu_s'] / cpu:.2f}x (target >= 1.0x)"
        )


def engines() -> list[str]:
    """The operator's engines this environment has: native (mdf-kernels' FastTextModel) and fastText's binding."""
    from mdf import has_native_kernel

    if os.environ.get("MDF_BENCH_ENGINES"):
        return os.environ["MDF_BENCH_ENGINES"].split(",")
    return [*(["native"] if has_native_kernel("FastTextModel") else []), "fasttext"]


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def memory(model: Path, engine: str) -> None:
    """Run in a fresh process: RSS before, after one instance loads, after four threads score with their own."""
    from mdf_text.ops.fasttext_classifier import FastTextClassifier

    batch = pa.RecordBatch.from_pydict({"text": ["some words to score"] * 256})
    before = rss_mb()
    first = FastTextClassifier(model=str(model), engine=engine)
    first.ensure_setup()
    first.refine(batch)
    one = rss_mb()
    ops = [FastTextClassifier(model=str(model), engine=engine) for _ in range(4)]
    threads = [threading.Thread(target=lambda op=op: (op.ensure_setup(), op.refine(batch))) for op in ops]
    [t.start() for t in threads]
    [t.join() for t in threads]
    four = rss_mb()
    size = model.stat().st_size / 2**20
    print(
        f"  [{engine}] model file {size:,.0f} MB; RSS {before:,.0f} MB before, {one:,.0f} MB with it loaded (+{one - before:,.0f}),"
        f" {four:,.0f} MB after 4 more instances in 4 threads (+{four - one:,.0f}) -> "
        f"{'once per process' if four - one < 0.1 * size else 'NOT SHARED'}"
    )


def pipeline(model: Path, rows: int, executor: str, engine: str) -> None:
    """``mdf run`` on 1 core (1 worker or replica) vs 2 cores (2); the run's own wall time from metrics.json
    (start-up apart: Ray's takes seconds), best of 2."""
    src = DATA / f"pipeline-{rows}"
    if not src.exists():
        src.mkdir(parents=True)
        texts = corpus(rows, long_chars=20_000, seed=9)
        for i in range(8):
            part = texts[i::8]
            pq.write_table(pa.table({"id": range(len(part)), "text": part}), src / f"part-{i}.parquet")
    exe = Path(sys.executable).with_name("mdf")
    times = {}
    for n, cores in ((1, "0"), (2, "0,1")):
        stage = {
            "name": "score",
            "operators": [
                {"fasttext_classifier": {"model": str(model), "labels": ["hq"], "engine": engine}},
                {"score_filter": {"column": "fasttext_hq", "min": 0.5}},
            ],
        }
        if executor == "ray":
            stage["replicas"] = n
        best = float("inf")
        for attempt in range(2):
            out = DATA / f"pipeline-out-{executor}-{engine}-{n}-{attempt}"
            recipe = {
                "reader": {"type": "parquet", "paths": [str(src)]},
                "stages": [stage],
                "writer": {"type": "parquet", "path": str(out)},
                "executor": {"type": "inline", "workers": n} if executor == "inline" else {"type": "ray"},
            }
            path = DATA / "pipeline.yaml"
            path.write_text(yaml.safe_dump(recipe))
            cmd = ["taskset", "-c", cores, str(exe), "run", "-q", "--overwrite", str(path)]
            subprocess.run(cmd, check=True, capture_output=True)
            best = min(best, json.loads((out / "_mdf" / "metrics.json").read_text())["wall_s"])
        times[n] = best
    unit = "worker" if executor == "inline" else "replica"
    print(
        f"  pipeline ({executor}, {engine}), {rows:,} texts in 8 files: 1 {unit} on 1 core {times[1]:.2f} s, 2 {unit}s on 2 "
        f"cores {times[2]:.2f} s -> 2 cores / 1 core = {times[1] / times[2]:.2f}x (target >= 1.8x)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--long-chars", type=int, default=1_000_000, help="length of the five very long texts")
    ap.add_argument("--big-mb", type=int, default=1024, help="size of the big model's input matrix")
    ap.add_argument("--pipeline-rows", type=int, default=40_000)
    ap.add_argument("--executors", default="inline,ray", help="pipeline runs: inline and/or ray")
    ap.add_argument("--engines", default="", help="engines to measure (default: every one installed)")
    ap.add_argument("--memory-of", help=argparse.SUPPRESS)  # internal: the memory measure, in a fresh process
    args = ap.parse_args()
    if args.memory_of:
        return memory(Path(args.memory_of), args.engines)
    if args.engines:
        os.environ["MDF_BENCH_ENGINES"] = args.engines
    import fasttext_pybind

    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; mdf's binding: {fasttext_pybind.__file__}")
    python = reference_python()
    models = train_models(python, args.big_mb)
    texts = corpus(args.texts, args.long_chars)
    cores = os.sched_getaffinity(0)
    pin_one_core()
    for tag in ("bin", "ftz"):
        compare(python, models[tag], texts, args.repeat, tag)
    os.sched_setaffinity(0, cores)
    for engine in engines():
        cmd = [sys.executable, __file__, "--memory-of", str(models["big"]), "--engines", engine]
        subprocess.run(cmd, check=True)
    for executor in filter(None, args.executors.split(",")):
        for engine in engines():
            pipeline(models["bin"], args.pipeline_rows, executor, engine)


if __name__ == "__main__":
    main()
