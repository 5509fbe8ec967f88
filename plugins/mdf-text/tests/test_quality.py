"""The quality operators (gopher, c4, fineweb, bad words, PII): contract, reasons, rewriting, counters, bad input.

Decisions are checked against DataTrove's rules in rust/tests/test_kernels_text_quality.py and, on real text against
DataTrove itself, by benchmarks/bench_quality_filters.py; here the operators' own behaviour is tested, on the
real AEB article texts of ../shared/data when present and on hand-made documents.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from mdf import REASON
from mdf.errors import OperatorError
from mdf.testing import check_operator_contract, run_operator

pytest.importorskip("mdf_kernels", reason="the quality filters run on mdf-kernels: pip install ./rust")

from mdf_text.ops.badwords import BadWordsFilter
from mdf_text.ops.c4 import C4QualityFilter
from mdf_text.ops.fineweb import FineWebQualityFilter
from mdf_text.ops.gopher import GopherQualityFilter, GopherRepetitionFilter
from mdf_text.ops.pii import PiiRefiner

AEB = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "aeb" / "ground-truth.json"

GOOD = (
    "The committee met on Tuesday to discuss the budget for the coming year. Members agreed that the plan "
    "should be published with a summary of the main changes. "
) * 4
NO_STOP_WORDS = " ".join(w for w in GOOD.split(" ") if w not in {"the", "to", "with", "that", "be", "of", "and"})
GOOD_LINES = "\n".join(
    [
        "The committee met on Tuesday to discuss the budget for the coming year.",
        "Members agreed that the plan should be published with a summary of changes.",
        "Several speakers asked for more time to read the documents before the vote.",
        "The chair said the next meeting would be held in the town hall in March.",
        "A final version of the report will be available to the public online.",
        "Questions about the process can be sent to the office of the clerk.",
    ]
)


@pytest.fixture(scope="module")
def aeb_texts() -> list[str]:
    if not AEB.exists():
        pytest.skip(f"{AEB} absent (real AEB article texts)")
    return [r["articleBody"] for r in json.loads(AEB.read_text()).values()]


def batch(texts: list[str | None]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"id": [str(i) for i in range(len(texts))], "text": texts})


ALL = [GopherQualityFilter, GopherRepetitionFilter, C4QualityFilter, FineWebQualityFilter]


@pytest.mark.parametrize("op", ALL)
def test_contract_on_real_articles(op, aeb_texts: list[str]) -> None:
    check_operator_contract(op(), batch([*aeb_texts, None, "", "!!! ... ???"]), id_column="id")


def test_real_articles_mostly_pass(aeb_texts: list[str]) -> None:
    kept, rejected = run_operator(GopherQualityFilter(), batch(aeb_texts))
    assert kept.num_rows > 0.8 * len(aeb_texts)  # edited news articles: what Gopher's rules are meant to keep
    if rejected is not None:
        assert all(r.startswith("gopher_quality_filter:gopher_") for r in rejected.column(REASON).to_pylist())


@pytest.mark.parametrize(
    ("op", "text", "reason"),
    [
        (GopherQualityFilter(), "too short.", "gopher_short_doc"),
        (GopherQualityFilter(), NO_STOP_WORDS, "gopher_enough_stop_words"),
        (GopherQualityFilter(max_symbol_word_ratio=0.01), GOOD + " #a" * 2, "gopher_too_many_hashes"),
        (GopherRepetitionFilter(), "same line here\n\n" * 10, "dup_para_frac"),
        (GopherRepetitionFilter(dup_para_frac=None, dup_para_char_frac=None), "same line\n" * 10, "dup_line_frac"),
        (FineWebQualityFilter(), "no full stop\n" * 3 + "still none", "line_punct_ratio"),
        (C4QualityFilter(), GOOD_LINES + "\nLorem ipsum dolor sit amet.", "lorem_ipsum"),
        (C4QualityFilter(), GOOD_LINES + "\nThe value of x is {a: 1}.", "curly_bracket"),
        (C4QualityFilter(), "One sentence only here.", "too_few_sentences"),
    ],
)
def test_named_reasons(op, text: str, reason: str) -> None:
    _, rejected = run_operator(op, batch([text]))
    assert rejected is not None and rejected.column(REASON).to_pylist() == [f"{op.name}:{reason}"]


def test_c4_rewrites_text_and_counts_lines() -> None:
    doc = (
        "Menu\n"
        + GOOD_LINES.replace("budget", "budget[1]")
        + "\nPlease enable JavaScript to see comments.\nWe use cookies to improve this site.\nToo short."
    )
    op = C4QualityFilter()
    kept, rejected = run_operator(op, batch([doc, None]))
    assert kept.column("text").to_pylist() == [GOOD_LINES]
    assert rejected.column(REASON).to_pylist() == ["c4_quality_filter:null_text"]
    assert op.metrics.counters == {
        "line-total": 10,
        "line-filter-too_long_word": 0,
        "line-filter-no_terminal_punc": 1,
        "line-filter-too_few_words": 1,
        "line-filter-javascript": 1,
        "line-filter-policy": 1,
        "line-kept": 6,
    }
    kept, _ = run_operator(C4QualityFilter(filter_no_terminal_punct=False), batch([doc]))
    assert kept.column("text").to_pylist()[0].startswith(GOOD_LINES.splitlines()[0])  # "Menu" is one word: gone


def test_c4_keeps_large_string_type() -> None:
    b = pa.RecordBatch.from_pydict({"text": pa.array([GOOD_LINES], pa.large_string())})
    kept, _ = run_operator(C4QualityFilter(), b)
    assert kept.schema.field("text").type == pa.large_string()


def test_bad_input_gets_a_decision() -> None:
    """Null, empty, blank, punctuation only, 10 MB of one character: a decision each, never an exception. Kept
    or dropped as DataTrove decides (it keeps blank text and one huge word under the repetition rules)."""
    texts = [None, "", "   ", "?!.,;" * 10, "x" * 10_000_000]
    for op in ALL:
        kept, rejected = run_operator(op(), batch(texts))
        assert kept.num_rows + rejected.num_rows == len(texts), op.name
        reasons = dict(zip(rejected.column("id").to_pylist(), rejected.column(REASON).to_pylist(), strict=True))
        assert reasons["0"] == f"{op.name}:null_text"
        if op is not GopherRepetitionFilter:
            assert kept.num_rows == 0, op.name
    _, rejected = run_operator(GopherRepetitionFilter(), batch([""]))
    assert rejected.column(REASON).to_pylist() == ["gopher_repetition_filter:empty"]


def test_bad_words_filter(tmp_path: Path) -> None:
    (tmp_path / "en.txt").write_text("darn\nheck it\n")
    (tmp_path / "de.txt").write_text("mist\n")
    op = BadWordsFilter(word_lists={"en": tmp_path / "en.txt", "de": tmp_path / "de.txt"})
    b = pa.RecordBatch.from_pydict(
        {
            "text": ["Oh DARN.", "darned good", "well heck it all", "so ein Mist", "Mist is fog", None, "ümist"],
            "language": ["en", "en", "en", "de", "en", "en", "de"],
        }
    )
    kept, rejected = run_operator(op, b)
    assert kept.column("text").to_pylist() == ["darned good", "Mist is fog", "ümist"]
    assert rejected.column(REASON).to_pylist() == ["bad_words_filter:document_removed_with_badwords"] * 3 + [
        "bad_words_filter:null_text"
    ]
    some = BadWordsFilter(word_lists={"en": tmp_path / "en.txt"}, keep_fraction=0.5, seed=3, language_column=None)
    many = pa.RecordBatch.from_pydict({"text": [f"darn {i}" for i in range(400)]})
    kept, _ = run_operator(some, many)
    assert 140 < kept.num_rows < 260
    with pytest.raises(OperatorError, match="no word list for language 'fr'"):
        run_operator(op, pa.RecordBatch.from_pydict({"text": ["x"], "language": ["fr"]}))


def test_pii_refiner_replaces_emails_and_public_ips() -> None:
    op = PiiRefiner()
    b = batch(["mail john.doe@example.org now", "from 8.8.8.8 and 192.168.1.1", None, "nothing"])
    kept, rejected = run_operator(op, b)
    assert rejected is None
    assert kept.column("text").to_pylist() == [
        "mail email@example.com now",
        "from 22.214.171.124 and 192.168.1.1",
        None,
        "nothing",
    ]
    assert op.metrics.counters == {"emails_replaced": 1, "ips_replaced": 1}
