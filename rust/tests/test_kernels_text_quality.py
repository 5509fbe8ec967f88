"""Text quality kernels against a slow Python reference of DataTrove 0.10.1's rules.

The reference below restates DataTrove's GopherQuality, GopherRepetition, FineWebQuality and C4Quality
filters line for line in plain Python over the kernel's own words (``text_words``) and sentence counts, so the
statistics (Python ``len``, ``splitlines``, ``strip``, ``isalpha``, n-gram bookkeeping, thresholds) are checked
on random documents; the tokenizer itself is checked against spaCy in ``test_kernels_text_words.py``.
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pyarrow as pa
import pytest

mk = pytest.importorskip("mdf_kernels")

# DataTrove's PUNCTUATION_SET = DT_PUNCTUATION | DT_TERMINAL (copied from datatrove.utils.text, checked equal)
DT_PUNCTUATION = (
    "!/\u2014\u201d:\uff05\uff11\u3008&(\u3001\u2501\\\u3010#%\u300c\u300d\uff0c\u3011\uff1b+^]~\u201c\u300a\u201e';\u2019{|\u2236\xb4[=-`*\uff0e\uff08\u2013\uff1f\uff01\uff1a$\uff5e\xab\u3009,><\u300b)?\uff09\u3002\u2026@_.\"}\u25ba\xbb"
    + "".join(chr(x) for a, b in ((0, 9), (11, 13), (13, 32), (127, 160)) for x in range(a, b))
)
DT_TERMINAL = set(
    "!.?\u0589\u061d\u061e\u061f\u06d4\u0700\u0701\u0702\u07f9\u0837\u0839\u083d\u083e\u0964\u0965\u104a"
    "\u104b\u1362\u1367\u1368\u166e\u1735\u1736\u17d4\u17d5\u17d6\u17d9\u17da\u1803\u1809\u1944\u1945"
    "\u1aa8\u1aa9\u1aaa\u1aab\u1b5a\u1b5b\u1b5e\u1b5f\u1b7d\u1b7e\u1c3b\u1c3c\u1c7e\u1c7f\u203c\u203d"
    "\u2047\u2048\u2049\u2e2e\u2e3c\u2e53\u2e54\u3002\ua4ff\ua60e\ua60f\ua6f3\ua6f7\ua876\ua877\ua8ce"
    "\ua8cf\ua92f\ua9c8\ua9c9\uaa5d\uaa5e\uaa5f\uaaf0\uaaf1\uabeb\ufe52\ufe56\ufe57\uff01\uff0e\uff1f"
    "\uff61\U00010a56\U00010a57\U00010f55\U00010f56\U00010f57\U00010f58\U00010f59\U00010f86\U00010f87"
    "\U00010f88\U00010f89\U00011047\U00011048\U000110be\U000110bf\U000110c0\U000110c1\U00011141\U00011142"
    "\U00011143\U000111c5\U000111c6\U000111cd\U000111de\U000111df\U00011238\U00011239\U0001123b\U0001123c"
    "\U000112a9\U0001144b\U0001144c\U000115c2\U000115c3\U000115c9\U000115ca\U000115cb\U000115cc\U000115cd"
    "\U000115ce\U000115cf\U000115d0\U000115d1\U000115d2\U000115d3\U000115d4\U000115d5\U000115d6\U000115d7"
    "\U00011641\U00011642\U0001173c\U0001173d\U0001173e\U00011944\U00011946\U00011a42\U00011a43\U00011a9b"
    "\U00011a9c\U00011c41\U00011c42\U00011ef7\U00011ef8\U00011f43\U00011f44\U00016a6e\U00016a6f\U00016af5"
    "\U00016b37\U00016b38\U00016b44\U00016e98\U0001bc9f\U0001da88"
)
PUNCT_SET = set(DT_PUNCTUATION) | DT_TERMINAL
STOP_WORDS = {"the", "be", "to", "of", "and", "that", "have", "with"}


def ref_gopher_quality(text: str, words: list[str]) -> str | None:
    n_words = len(words)
    non_symbol = [w for w in words if any(ch not in PUNCT_SET for ch in w)]
    if len(non_symbol) < 50:
        return "gopher_short_doc"
    if len(non_symbol) > 100000:
        return "gopher_long_doc"
    avg = sum(len(w) for w in non_symbol) / len(non_symbol)
    if avg < 3:
        return "gopher_below_avg_threshold"
    if avg > 10:
        return "gopher_above_avg_threshold"
    if text.count("#") / n_words > 0.1:
        return "gopher_too_many_hashes"
    if (text.count("...") + text.count("…")) / n_words > 0.1:
        return "gopher_too_many_ellipsis"
    lines = text.splitlines()
    if sum(s.lstrip().startswith("•") or s.lstrip().startswith("-") for s in lines) / len(lines) > 0.9:
        return "gopher_too_many_bullets"
    if sum(s.rstrip().endswith("...") or s.rstrip().endswith("…") for s in lines) / len(lines) > 0.3:
        return "gopher_too_many_end_ellipsis"
    if sum(any(c.isalpha() for c in w) for w in words) / n_words < 0.8:
        return "gopher_below_alpha_threshold"
    if len(STOP_WORDS & set(words)) < 2:
        return "gopher_enough_stop_words"
    return None


def find_duplicates(x: list[str]) -> tuple[int, int]:
    seen: set[str] = set()
    n = chars = 0
    for e in x:
        if e in seen:
            n += 1
            chars += len(e)
        else:
            seen.add(e)
    return n, chars


def ref_gopher_repetition(text: str, words: list[str]) -> str | None:
    if not text:
        return "empty"
    paras = re.split(r"\n{2,}", text.strip())
    d, c = find_duplicates(paras)
    if d / len(paras) > 0.3:
        return "dup_para_frac"
    if c / len(text) > 0.2:
        return "dup_para_char_frac"
    lines = re.split("\n+", text)
    d, c = find_duplicates(lines)
    if d / len(lines) > 0.3:
        return "dup_line_frac"
    if c / len(text) > 0.2:
        return "dup_line_char_frac"
    for n, frac in ((2, 0.2), (3, 0.18), (4, 0.16)):
        grams = [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
        if grams:
            top, count = Counter(grams).most_common(1)[0]
            if len(top) * count / len(text) > frac:
                return f"top_{n}_gram"
    for n, frac in ((5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10)):
        seen: set[str] = set()
        rep = idx = 0
        while idx < len(words) - n + 1:
            g = "".join(words[idx : idx + n])
            if g in seen:
                rep += len(g)
                idx += n
            else:
                seen.add(g)
                idx += 1
        if rep / len(text) > frac:
            return f"duplicated_{n}_n_grams"
    return None


def ref_fineweb(text: str, words: list[str]) -> str | None:
    lines = [line for line in text.split("\n") if line.strip() != ""]
    if not lines:
        return "empty"
    if sum(line.endswith(tuple(DT_TERMINAL)) for line in lines) / len(lines) < 0.12:
        return "line_punct_ratio"
    if sum(len(line) <= 30 for line in lines) / len(lines) > 0.67:
        return "short_line_ratio"
    if find_duplicates(lines)[1] / len(text.replace("\n", "")) > 0.01:
        return "char_dup_ratio"
    if text.count("\n") / len(words) > 0.3:
        return "list_ratio"
    return None


CITATION = re.compile(r"\[\d*]|\[edit]|\[citation needed]")
POLICY = ["terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies"]


def ref_c4(text: str, punct: bool) -> tuple[str | None, str | None]:
    """(reason, cleaned text) with sentences counted by the kernel (the tokenizer is tested on its own)."""
    kept, sentences = [], 0
    for line in text.splitlines():
        line = line.strip()
        words = line.split()
        if any(len(w) > 1000 for w in words):
            continue
        line = CITATION.sub("", line)
        if punct and (not line.endswith((".", "?", "!", '"', "'")) or line.endswith("...")):
            continue
        if len(words) < 3:
            continue
        low = line.lower()
        if "lorem ipsum" in low:
            return "lorem_ipsum", None
        if "javascript" in low:
            continue
        if "{" in line:
            return "curly_bracket", None
        if any(p in low for p in POLICY):
            continue
        sentences += mk.sentence_count(pa.array([line])).to_pylist()[0]
        kept.append(line)
    if sentences < 5:
        return "too_few_sentences", None
    return None, "\n".join(kept).strip()


WORDS = [
    "the",
    "be",
    "to",
    "of",
    "and",
    "that",
    "have",
    "with",
    "a",
    "an",
    "is",
    "it",
    "cat",
    "dog",
    "house",
    "internationalization",
    "quick",
    "brown",
]
NOISE = [
    "#",
    "...",
    "…",
    "•",
    "-",
    "--",
    ",",
    ".",
    "!",
    "?",
    ";",
    ":",
    "'",
    '"',
    "(",
    ")",
    "[1]",
    "[edit]",
    "{x}",
    "javascript",
    "lorem",
    "ipsum",
    "cookies",
    "privacy",
    "policy",
    "don't",
    "U.S.",
    "e.g.",
    "3.5%",
    "$5",
    "10km",
    "http://a.example.com/x",
    "é",
    "中文",
    "Ωμέγα",
    "😀",
    "\xa0",
    "\x1c",
]


def random_doc(rng: random.Random) -> str:
    """Lines of words with a per-document share of noise tokens, so documents land on every side of the rules."""
    noise = rng.choice([0.0, 0.02, 0.1, 0.3, 0.6])
    lines = []
    for _ in range(rng.randint(0, 40)):
        n = rng.randint(0, 25)
        line = " ".join(rng.choice(NOISE) if rng.random() < noise else rng.choice(WORDS) for _ in range(n))
        if rng.random() < 0.7:
            line += rng.choice([".", ".", "!", "?", "...", "", '"', " "])
        if rng.random() < 0.05:
            line = rng.choice(["• ", "- ", "  -"]) + line
        lines.append(line)
    if lines and rng.random() < 0.3:
        lines += rng.sample(lines, k=rng.randint(1, len(lines)))
    return rng.choice(["\n", "\n\n", "\r\n", "\n \n"]).join(lines)


@pytest.fixture(scope="module")
def docs() -> list[str]:
    rng = random.Random(1234)
    return [random_doc(rng) for _ in range(400)]


def test_gopher_quality_matches_reference(docs: list[str]) -> None:
    words = mk.text_words(pa.array(docs)).to_pylist()
    got = mk.gopher_quality(pa.array(docs)).to_pylist()
    want = [ref_gopher_quality(t, w) for t, w in zip(docs, words, strict=True)]
    assert got == want
    assert len(set(want)) >= 4  # the random documents reach several rules


def test_gopher_repetition_matches_reference(docs: list[str]) -> None:
    words = mk.text_words(pa.array(docs)).to_pylist()
    got = mk.gopher_repetition(pa.array(docs)).to_pylist()
    want = [ref_gopher_repetition(t, w) for t, w in zip(docs, words, strict=True)]
    assert got == want
    assert len(set(want)) >= 4


def test_fineweb_matches_reference(docs: list[str]) -> None:
    words = mk.text_words(pa.array(docs)).to_pylist()
    got = mk.fineweb_quality(pa.array(docs)).to_pylist()
    assert got == [ref_fineweb(t, w) for t, w in zip(docs, words, strict=True)]


@pytest.mark.parametrize("punct", [True, False])
def test_c4_matches_reference(docs: list[str], punct: bool) -> None:
    texts, reasons, counts = mk.c4_quality(pa.array(docs), {"filter_no_terminal_punct": punct})
    want = [ref_c4(t, punct) for t in docs]
    assert reasons.to_pylist() == [r for r, _ in want]
    assert texts.to_pylist() == [t for _, t in want]
    assert counts["line-total"] >= counts["line-kept"] > 0
    assert list(counts) == list(mk.C4_LINE_COUNTERS)


def test_thresholds_are_parameters() -> None:
    text = pa.array(["word " * 10 + "the and with."])
    assert mk.gopher_quality(text).to_pylist() == ["gopher_short_doc"]
    assert mk.gopher_quality(text, {"min_doc_words": 5}).to_pylist() == [None]
    assert mk.gopher_quality(text, {"min_doc_words": None, "min_stop_words": 4}).to_pylist() == [
        "gopher_enough_stop_words"
    ]
    with pytest.raises(ValueError, match="unknown parameter 'min_words'"):
        mk.gopher_quality(text, {"min_words": 5})
    with pytest.raises(TypeError, match="min_doc_words must be a number"):
        mk.gopher_quality(text, {"min_doc_words": "many"})


def test_bad_inputs_get_a_decision_not_an_exception() -> None:
    bad = [None, "", "   \n ", "!!! ??? ... ### ---", "a" * 10_000_000]
    # what DataTrove decides on the same texts (None = kept; its zero-word divisions become gopher_short_doc)
    want = {
        "gopher_quality": ["null_text"] + ["gopher_short_doc"] * 4,
        "gopher_repetition": ["null_text", "empty", None, "top_2_gram", None],
        "fineweb_quality": ["null_text", "empty", "empty", "line_punct_ratio", "line_punct_ratio"],
    }
    for fn in (mk.gopher_quality, mk.gopher_repetition, mk.fineweb_quality):
        reasons = fn(pa.array(bad, pa.large_string())).to_pylist()
        assert reasons == want[fn.__name__]
    _, reasons, _ = mk.c4_quality(pa.array(bad))
    assert reasons.to_pylist() == ["null_text"] + ["too_few_sentences"] * 4
    # bytes that are not UTF-8 (a lone surrogate's encoding) in a binary column: read with U+FFFD, decided
    raw = pa.array([b"ok \xed\xa0\x80 " * 60], pa.binary())
    assert mk.gopher_quality(raw).to_pylist() == ["gopher_below_avg_threshold"]
    assert mk.text_words(raw).to_pylist()[0][:4] == ["ok", "\ufffd", "\ufffd", "\ufffd"]  # U+FFFD is a spaCy icon
