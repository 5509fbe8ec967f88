"""The reference side of bench_fasttext.py, run in ``benchmarks/.venv-fasttext`` (fasttext-wheel 0.9.2 with
numpy<2, the combination its Python ``predict`` needs): trains the benchmark's models and times fastText's own
Python ``predict`` loop. Reads and writes plain files (JSON lines, .npy) so it needs nothing of mdf.

  python reference.py train DIR --big-mb N      # DIR/train.txt in; DIR/small.bin, small.ftz, big.bin out
  python reference.py predict MODEL TEXTS OUT --repeat R   # TEXTS: JSON lines; OUT.npy probs, OUT.json rest
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import fasttext
import fasttext.FastText
import numpy as np

fasttext.FastText.eprint = lambda *args, **kwargs: None  # load_model's notice about its return type


def train(folder: str, big_mb: int) -> None:
    corpus = os.path.join(folder, "train.txt")
    opts = {"wordNgrams": 2, "minCount": 1, "thread": 1, "verbose": 0, "epoch": 5, "lr": 0.5}
    small = fasttext.train_supervised(corpus, dim=32, bucket=200_000, **opts)
    small.save_model(os.path.join(folder, "small.bin"))
    small.quantize(input=corpus, retrain=False, cutoff=0, dsub=2)
    small.save_model(os.path.join(folder, "small.ftz"))
    # a big model as DCLM's: the input matrix is (words + buckets) x dim float32; the buckets set its size
    dim = 64
    buckets = max(1, big_mb * 2**20 // (dim * 4))
    big = fasttext.train_supervised(corpus, dim=dim, bucket=buckets, **{**opts, "epoch": 1})
    big.save_model(os.path.join(folder, "big.bin"))


def predict(model_path: str, texts_path: str, out: str, repeat: int) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    model = fasttext.load_model(model_path)
    labels = list(model.get_labels())
    with open(texts_path, encoding="utf-8") as f:
        texts = [json.loads(line) for line in f]
    lines = [t.replace("\n", " ") for t in texts]
    probs = np.zeros((len(lines), len(labels)), np.float64)
    top: list[str] = []
    index = {label: j for j, label in enumerate(labels)}
    for i, line in enumerate(lines):
        found, p = model.predict(line, k=-1)
        for label, value in zip(found, p, strict=True):
            probs[i, index[label]] = value
        top.append(found[0] if found else "")
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        for text in texts:  # as DCLM scores a page: the wrapper refuses newlines, so they become spaces
            model.predict(text.replace("\n", " "), k=-1)
        best = min(best, time.process_time() - t)
    np.save(out + ".npy", probs)
    with open(out + ".json", "w") as f:
        json.dump({"labels": [x.removeprefix("__label__") for x in labels], "top": top, "cpu_s": best}, f)


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("folder")
    t.add_argument("--big-mb", type=int, default=1024)
    p = sub.add_parser("predict")
    p.add_argument("model")
    p.add_argument("texts")
    p.add_argument("out")
    p.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.cmd == "train":
        train(args.folder, args.big_mb)
    else:
        predict(args.model, args.texts, args.out, args.repeat)
    print("ok", file=sys.stderr)


if __name__ == "__main__":
    main()
