"""Helpers shared by the bench_kernels_*.py scripts (not a benchmark itself).

Each measurement runs in a fresh subprocess so thread-pool sizes (MDF_NUM_THREADS,
RAYON_NUM_THREADS) are set before any kernel library is imported.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time

WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "i",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "they",
    "you",
    "were",
    "her",
    "she",
    "there",
    "would",
    "their",
    "we",
    "him",
    "been",
    "has",
    "when",
    "who",
    "will",
    "more",
    "no",
    "if",
    "out",
    "so",
    "said",
    "what",
    "up",
    "its",
    "about",
    "into",
    "than",
    "them",
    "can",
    "only",
    "other",
    "new",
    "some",
    "could",
    "time",
    "these",
    "two",
    "may",
    "then",
    "do",
    "first",
    "any",
    "my",
    "now",
    "such",
    "like",
    "our",
    "over",
    "man",
    "me",
    "even",
    "most",
    "made",
    "after",
    "also",
    "did",
    "many",
    "before",
    "must",
    "through",
    "back",
    "years",
    "where",
    "much",
    "your",
    "way",
    "well",
    "down",
    "should",
    "because",
    "each",
    "just",
    "those",
    "people",
    "how",
    "too",
    "little",
    "state",
    "good",
    "very",
    "make",
    "world",
    "still",
    "own",
    "see",
    "men",
    "work",
    "long",
    "get",
    "here",
    "between",
    "both",
    "life",
    "being",
    "under",
    "never",
    "day",
    "same",
    "another",
    "know",
    "while",
    "last",
    "might",
    "us",
    "great",
    "old",
    "year",
    "off",
    "come",
    "since",
    "against",
    "go",
    "came",
    "right",
    "used",
    "take",
    "three",
    "data",
    "model",
    "system",
    "process",
    "result",
    "value",
    "method",
    "language",
]


def english_like_texts(n: int, size: int = 2500, seed: int = 0) -> list[str]:
    """Deterministic texts of about `size` characters: Zipf-distributed words, sentences,
    capitals and punctuation."""
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(len(WORDS))]
    out = []
    for _ in range(n):
        parts, length = [], 0
        while length < size:
            sentence = rng.choices(WORDS, weights, k=rng.randint(6, 20))
            sentence[0] = sentence[0].capitalize()
            s = " ".join(sentence) + rng.choice([".", ".", "!", "?", ";"])
            parts.append(s)
            length += len(s) + 1
        out.append(" ".join(parts))
    return out


def best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run_worker(script: str, name: str, env: dict[str, str] | None = None) -> dict:
    """Run `python script --worker name` and return the JSON it prints last."""
    proc = subprocess.run(
        [sys.executable, script, "--worker", name],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"worker {name} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def emit(result: dict) -> None:
    print(json.dumps(result), flush=True)


def worker_name() -> str | None:
    return sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--worker" else None


def timed_process(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """Wall seconds of ``cmd`` from launch to exit (start-up and I/O included); a failure stops the benchmark with
    the command's last stderr lines."""
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}: exit {out.returncode}: {out.stderr[-2000:]}")
    return wall
