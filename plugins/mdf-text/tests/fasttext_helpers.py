"""The small fastText models the fastText tests train themselves (fasttext-wheel 0.9.2, see fasttext_train.py):
trained once per test session, shared by test_fasttext_classifier.py and test_fasttext_native.py."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# vocabularies as strings (one line each); document() splits them
WORDS = {
    "hq": "theorem proof lemma study result method analysis evidence sample measured hypothesis",
    "cc": "buy click free casino deal now cheap offer win bonus subscribe",
    "news": "minister said council vote election today report city police budget",
}
SHARED = "the a of and to in is it was for on with as 数据 данные 😀"


def document(rng: random.Random, label: str, words: int = 30) -> str:
    """Words drawn 3 in 5 from the label's vocabulary, else from the shared one (so scores are not all ~1)."""
    vocab = (WORDS[label].split(), SHARED.split())
    return " ".join(rng.choice(vocab[rng.random() >= 0.6]) for _ in range(words))


def trainer() -> list[str]:
    """How to run fasttext_train.py: in this environment if its ``fasttext`` can train (fasttext-wheel installed
    here), else in an environment of uv's with fasttext-wheel 0.9.2 (from the package registry, cached)."""
    try:
        import fasttext

        if hasattr(fasttext, "train_supervised"):
            return [sys.executable]
    except ImportError:
        pass
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is None:
        pytest.fail("training the test models needs fasttext-wheel: pip install uv (or fasttext-wheel==0.9.2)")
    isolated = ["--no-project", "--isolated", "--python", sys.executable]
    return [uv, "run", *isolated, "--with", "fasttext-wheel==0.9.2", "python"]


def train(tmp: Path) -> dict[str, Path]:
    """Train (and quantize) small supervised models and an unsupervised one with fasttext-wheel."""
    rng = random.Random(7)
    corpus = tmp / "train.txt"
    corpus.write_text("".join(f"__label__{lab} {document(rng, lab)}\n" for lab in [*WORDS] * 400), encoding="utf-8")
    cmd = [*trainer(), str(Path(__file__).with_name("fasttext_train.py")), str(corpus), str(tmp)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    (tmp / "notes.bin").write_bytes(b"not a model, just bytes\n" * 10)
    names = ["quality.bin", "quality.ftz", "hs.bin", "ova.bin", "subwords.bin", "subwords-qnorm.ftz"]
    return {
        "bin": tmp / "quality.bin",
        "ftz": tmp / "quality.ftz",
        "vectors": tmp / "vectors.bin",
        **{name: tmp / name for name in names},
    }


_TRAINED: dict[str, dict[str, Path]] = {}


def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """:func:`train` once per session (a few seconds of training, and uv's environment on first use)."""
    if "models" not in _TRAINED:
        _TRAINED["models"] = train(tmp_path_factory.mktemp("fasttext"))
    return _TRAINED["models"]
