"""Generate demo data: a CommonCrawl-like Parquet set (English-like pages, exact and near duplicates, blocked
domains, null texts) and a LAION-like image set (captions and JPEG-shaped bytes).

Used by ``mdf demo`` and the benchmarks. Pages are random draws from a pool of sentences, so generating
hundreds of thousands of 2.5 KB pages takes seconds, not minutes, and unrelated pages share no long passage;
lengths are log-normal (mean ~2.5 KB) with a
tail of short pages, like extracted web text. Correctness tests use hand-written data instead, so a bug here
cannot hide a bug in the operators.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BLOCKED_DOMAINS = ("casino-bonus.example", "cheap-pills.example", "spam-farm.example")
_SYLLABLES = [
    *("ka", "lo", "mi", "ne", "ra", "to", "su", "vi", "the", "and", "of", "in"),
    *("data", "web", "page", "model", "train", "clean", "text", "rust", "ray", "arrow"),
]


@dataclass(frozen=True)
class DemoSpec:
    rows: int = 20_000
    files: int = 4
    mean_chars: int = 2500
    dup_rate: float = 0.10
    near_dup_rate: float = 0.05
    blocked_rate: float = 0.05
    null_rate: float = 0.002
    seed: int = 7


def _vocabulary(rng: np.random.Generator) -> np.ndarray:
    return np.array(
        ["".join(rng.choice(_SYLLABLES, size=rng.integers(1, 4))) for _ in range(5000)]
        + ["the", "a", "of", "to", "and", "is", "in", "for", "on", "with"] * 200
    )


def _sentences(rng: np.random.Generator, count: int, words: int = 12) -> np.ndarray:
    """A pool of random sentences. Pages are built from random draws of them, so two pages share a passage
    only by chance (a sentence or two), as unrelated web pages do: near-duplicate detectors see no false
    near copies in the demo data, and generating a million pages stays a matter of seconds."""
    vocab = _vocabulary(rng)
    grid = vocab[rng.integers(0, len(vocab), size=(count, words))]
    return np.array([" ".join(row) for row in grid.tolist()], dtype=object)


def make_table(spec: DemoSpec) -> pa.Table:
    rng = np.random.default_rng(spec.seed)
    n = spec.rows
    lengths = np.clip(rng.lognormal(np.log(spec.mean_chars) - 0.18, 0.6, size=n), 20, 60_000).astype(np.int64)
    short = rng.random(n) < 0.03  # the tail of near-empty pages (menus, error pages) a length filter drops
    lengths[short] = rng.integers(20, 200, size=int(short.sum()))
    pool = _sentences(rng, 200_000)
    per_page = lengths // 70 + 1  # sentences average ~75 characters with their separator
    picks = rng.integers(0, len(pool), size=int(per_page.sum()))
    bounds = np.concatenate([[0], np.cumsum(per_page)]).tolist()
    texts: list[str | None] = [
        ". ".join(pool[picks[bounds[i] : bounds[i + 1]]].tolist())[:ln] for i, ln in enumerate(lengths.tolist())
    ]
    dup_from = rng.integers(0, n, size=n)
    is_dup = rng.random(n) < spec.dup_rate
    for i in np.nonzero(is_dup)[0].tolist():
        j = int(dup_from[i]) % max(i, 1)
        texts[i] = texts[j]
    near = (rng.random(n) < spec.near_dup_rate) & ~is_dup  # a copy with ~2 % of its words edited
    for i in np.nonzero(near)[0].tolist():
        words = (texts[int(dup_from[i]) % max(i, 1)] or "").split(" ")
        for k in rng.integers(0, len(words), size=max(1, len(words) // 50)).tolist():
            words[k] = "edited"
        texts[i] = " ".join(words)
    for i in np.nonzero(rng.random(n) < spec.null_rate)[0].tolist():
        texts[i] = None
    hosts = np.array([f"site{k}.{tld}" for k, tld in enumerate(rng.choice(["com", "org", "net", "de", "io"], 3000))])
    host = hosts[rng.integers(0, len(hosts), size=n)].astype(object)
    blocked = rng.random(n) < spec.blocked_rate
    bad = np.array(BLOCKED_DOMAINS, dtype=object)[rng.integers(0, len(BLOCKED_DOMAINS), size=int(blocked.sum()))]
    sub = rng.choice(np.array(["", "www.", "m.", "news."], dtype=object), size=int(blocked.sum()))
    host[blocked] = sub + bad
    urls = [f"https://{h}/page/{i}" for i, h in enumerate(host.tolist())]
    return pa.table(
        {
            "id": pa.array([f"doc-{i:08d}" for i in range(n)]),
            "url": pa.array(urls),
            "text": pa.array(texts, pa.string()),
            "lang": pa.array(["en"] * n),
        }
    )


def write_dataset(out_dir: str, spec: DemoSpec = DemoSpec(), row_group_rows: int = 10_000) -> list[str]:
    """Write ``spec.files`` Parquet files named ``cc-00000.parquet`` ...; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    table = make_table(spec)
    per = -(-table.num_rows // spec.files)
    paths = []
    for k in range(spec.files):
        path = os.path.join(out_dir, f"cc-{k:05d}.parquet")
        pq.write_table(table.slice(k * per, per), path, row_group_size=row_group_rows, compression="zstd")
        paths.append(path)
    return paths


def image_table(rows: int, seed: int = 0) -> pa.Table:
    """``id``, ``caption`` and ``image``: 50-300 KB of random bytes framed like a JPEG (``FF D8 FF E0`` ...
    ``FF D9``), enough for the batch-size planner to recognise and weigh images without Pillow."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(50_000, 300_001, size=rows)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    data = rng.integers(0, 256, size=int(offsets[-1]), dtype=np.uint8)
    for k, byte in enumerate(b"\xff\xd8\xff\xe0"):
        data[offsets[:-1] + k] = byte
    data[offsets[1:] - 2], data[offsets[1:] - 1] = 0xFF, 0xD9
    images = pa.Array.from_buffers(pa.large_binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    words = np.array(["a", "cat", "dog", "on", "the", "red", "sofa", "beach", "at", "sunset", "photo", "of"])
    captions = [" ".join(words[rng.integers(0, len(words), size=int(n))]) for n in rng.integers(3, 15, size=rows)]
    return pa.table({"id": [f"img-{i:07d}" for i in range(rows)], "caption": captions, "image": images})


def write_image_dataset(out_dir: str, rows: int, files: int = 2, seed: int = 0) -> list[str]:
    """Write ``img-00000.parquet`` ...: row groups of 64 rows as image sets use, image bytes stored uncompressed
    (random bytes do not compress)."""
    os.makedirs(out_dir, exist_ok=True)
    table = image_table(rows, seed)
    per = -(-rows // files)
    paths = []
    codecs = {"id": "zstd", "caption": "zstd", "image": "none"}
    for k in range(files):
        path = os.path.join(out_dir, f"img-{k:05d}.parquet")
        pq.write_table(table.slice(k * per, per), path, row_group_size=64, compression=codecs)
        paths.append(path)
    return paths


def dedup_table(
    rows: int,
    exact_rate: float = 0.10,
    near_rate: float = 0.10,
    change_rate: float = 0.03,
    mean_words: int = 290,
    seed: int = 11,
) -> pa.Table:
    """Independent English-like pages plus known copies: ``exact_rate`` identical, ``near_rate`` with
    ``change_rate`` of their words replaced. Column ``group`` is the ground truth: the index of the original
    page (its own index for an original). Pages are drawn word by word, not sliced from one corpus, so two
    originals share no long passage and every near-duplicate pair is a planted one.

    Words are kept as vocabulary numbers (``int16``) until each page is joined: as an array of strings the
    words of 2 M pages took 24 GB and the process was killed; the draws and the pages are the same.
    """
    rng = np.random.default_rng(seed)
    vocab = np.array(
        ["".join(rng.choice(_SYLLABLES, size=rng.integers(2, 5))) for _ in range(20_000)]
        + ["the", "a", "of", "to", "and", "is", "in", "for", "on", "with"] * 600
    )
    n_copies = int(rows * (exact_rate + near_rate))
    n_orig = rows - n_copies
    lengths = np.clip(rng.lognormal(np.log(mean_words) - 0.18, 0.6, size=n_orig), 30, 20 * mean_words).astype(int)
    words = rng.integers(0, len(vocab), size=int(lengths.sum())).astype(np.int16)  # 26,000 words: int16 holds them
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    docs = [words[bounds[i] : bounds[i + 1]] for i in range(n_orig)]
    texts = [" ".join(vocab[d].tolist()) for d in docs]
    group = list(range(n_orig))
    sources = rng.integers(0, n_orig, size=n_copies)
    near = rng.random(n_copies) < near_rate / (exact_rate + near_rate)
    for src, is_near in zip(sources.tolist(), near.tolist(), strict=True):
        if is_near:
            d = docs[src].copy()
            k = max(1, round(change_rate * len(d)))
            d[rng.choice(len(d), size=k, replace=False)] = rng.integers(0, len(vocab), size=k)
            texts.append(" ".join(vocab[d].tolist()))
        else:
            texts.append(texts[src])
        group.append(src)
    order = rng.permutation(rows)  # copies spread through the file, sometimes before their original
    return pa.table(
        {
            "id": pa.array([f"doc-{i:08d}" for i in range(rows)]),
            "text": pa.array([texts[i] for i in order], pa.string()),
            "group": pa.array([group[i] for i in order], pa.int64()),
            "near": pa.array([i >= n_orig and bool(near[i - n_orig]) for i in order]),
        }
    )
