"""Train the small fastText models the fasttext_classifier tests use, with fasttext-wheel 0.9.2.

Run as a script in an environment of its own (``uv run --with fasttext-wheel==0.9.2``): fasttext-wheel installs
the same module names as fasttext-predict (``fasttext``, ``fasttext_pybind``), so in mdf's environment it would
replace the binding language_id uses, and its Python ``predict`` fails under numpy 2.

  python fasttext_train.py CORPUS OUT_DIR    # OUT_DIR/quality.bin, quality.ftz (quantized), vectors.bin,
                                            # and the other losses and formats the Rust predict is checked on
"""

from __future__ import annotations

import os
import sys

import fasttext


def main(corpus: str, out: str) -> None:
    opts = {"wordNgrams": 2, "dim": 16, "epoch": 5, "bucket": 20_000, "minCount": 1, "thread": 1, "verbose": 0}
    model = fasttext.train_supervised(corpus, **opts)
    model.save_model(os.path.join(out, "quality.bin"))
    model.quantize(input=corpus, retrain=False, cutoff=0, dsub=2)
    model.save_model(os.path.join(out, "quality.ftz"))
    # the other losses, character n-grams, and a quantized model with norms and a cut-off (pruneidx); qout needs
    # 256 labels or more (fastText quantizes the output only with at least one row per centroid)
    fasttext.train_supervised(corpus, **{**opts, "loss": "hs"}).save_model(os.path.join(out, "hs.bin"))
    fasttext.train_supervised(corpus, **{**opts, "loss": "ova"}).save_model(os.path.join(out, "ova.bin"))
    sub = fasttext.train_supervised(corpus, **{**opts, "minn": 1, "maxn": 4, "wordNgrams": 3})
    sub.save_model(os.path.join(out, "subwords.bin"))
    sub.quantize(input=corpus, retrain=False, cutoff=500, dsub=2, qnorm=True)
    sub.save_model(os.path.join(out, "subwords-qnorm.ftz"))
    vectors = fasttext.train_unsupervised(
        corpus, model="skipgram", dim=8, epoch=1, minCount=1, bucket=1000, minn=0, maxn=0, thread=1, verbose=0
    )
    vectors.save_model(os.path.join(out, "vectors.bin"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
