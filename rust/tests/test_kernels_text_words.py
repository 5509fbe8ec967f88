# ruff: noqa: RUF001
# (SPACY_TOKENS is recorded spaCy output, with the quotes spaCy saw)
"""The text kernels' tokenizer (``text_words``) against tokens spaCy 3.8 ``blank("en")`` produced.

Apart from the quality filters' tests because every filter statistic counts these words: the filters are
checked against a reference that reuses the kernel's own words, so the words themselves are checked here, on
recorded spaCy output and on a non-English text (UAX #29 word boundaries).
"""

from __future__ import annotations

import pyarrow as pa
import pytest

mk = pytest.importorskip("mdf_kernels")

# (text, tokens of spaCy 3.8.18 blank("en") without whitespace tokens), recorded from spaCy
SPACY_TOKENS = [
    ("Hello, world! It's a test.", ["Hello", ",", "world", "!", "It", "'s", "a", "test", "."]),
    (
        "I can't believe it's not butter... Really?!",
        ["I", "ca", "n't", "believe", "it", "'s", "not", "butter", "...", "Really", "?", "!"],
    ),
    (
        "Visit https://example.com/path?q=1 or www.test.org today.",
        ["Visit", "https://example.com/path?q=1", "or", "www.test.org", "today", "."],
    ),
    (
        "The U.S. economy grew 3.5% in Q2 (per the BLS).",
        ["The", "U.S.", "economy", "grew", "3.5", "%", "in", "Q2", "(", "per", "the", "BLS", ")", "."],
    ),
    ("e-mail me at john.doe@example.com, ok?", ["e", "-", "mail", "me", "at", "john.doe@example.com", ",", "ok", "?"]),
    (
        "He paid $5,000 for 10km of road—expensive!",
        ["He", "paid", "$", "5,000", "for", "10", "km", "of", "road", "—", "expensive", "!"],
    ),
    (
        "“Quoted,” she said; ‘single’ too.",
        ["“", "Quoted", ",", "”", "she", "said", ";", "‘", "single", "’", "too", "."],
    ),
    (
        "Rock-n-roll isn't dead: 1990s-era bands (e.g. Nirvana) rule.",
        [
            "Rock",
            "-",
            "n",
            "-",
            "roll",
            "is",
            "n't",
            "dead",
            ":",
            "1990s",
            "-",
            "era",
            "bands",
            "(",
            "e.g.",
            "Nirvana",
            ")",
            "rule",
            ".",
        ],
    ),
    (
        "Line one.\nLine two!\n\n- bullet\n• another…",
        ["Line", "one", ".", "Line", "two", "!", "-", "bullet", "•", "another", "…"],
    ),
    (
        "Temperature was 30°C. Next day 25°F.",
        ["Temperature", "was", "30", "°", "C", ".", "Next", "day", "25", "°", "F", "."],
    ),
    ("Emojis 😀 are here 👍🏽 and :) smile.", ["Emojis", "😀", "are", "here", "👍", "🏽", "and", ":)", "smile", "."]),
    (
        "Mr. Smith & Mrs. Jones vs. Dr. Who etc.",
        ["Mr.", "Smith", "&", "Mrs.", "Jones", "vs.", "Dr.", "Who", "etc", "."],
    ),
    (
        "Numbers: 1,234.56 and 3-4 and 2^10 and a/b and x=y.",
        [
            "Numbers",
            ":",
            "1,234.56",
            "and",
            "3",
            "-",
            "4",
            "and",
            "2",
            "^",
            "10",
            "and",
            "a",
            "/",
            "b",
            "and",
            "x",
            "=",
            "y.",
        ],
    ),
    (
        "Don't, won't, shouldn't; y'all're done.",
        ["Do", "n't", ",", "wo", "n't", ",", "should", "n't", ";", "y'all're", "done", "."],
    ),
    ("Прием, как дела? Всё хорошо.", ["Прием", ",", "как", "дела", "?", "Всё", "хорошо", "."]),
    ('He said:"Stop!"And left.', ["He", 'said:"Stop!"And', "left", "."]),
]


def test_words_match_spacy_on_recorded_samples() -> None:
    got = mk.text_words(pa.array([s for s, _ in SPACY_TOKENS])).to_pylist()
    for (text, want), have in zip(SPACY_TOKENS, got, strict=True):
        assert have == want, text


def test_other_languages_use_unicode_words() -> None:
    words = mk.text_words(pa.array(["Grüße, Welt! 你好"]), language="de").to_pylist()
    assert words == [["Grüße", ",", "Welt", "!", "你", "好"]]
