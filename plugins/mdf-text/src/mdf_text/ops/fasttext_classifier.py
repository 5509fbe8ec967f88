"""``fasttext_classifier``: a supervised fastText model (DCLM's quality classifier, or any the user trains) scores
each text; one float32 column per label, so a later ``score_filter`` (or a later run of it on this output)
chooses the threshold without running the model again.

The text is prepared the way such models are trained and applied: optionally lowercased, cut to its first
``max_chars`` characters, newlines replaced by spaces (fastText reads one line per prediction; a newline would
end the text early). DCLM's recipe scores the whole text with newlines replaced and no lowercasing: the defaults
here. The preparation is vectorised Arrow kernels.

Two engines predict, with the same scores (within 1e-5 of fastText's own, same top label: the tests and
benchmarks/bench_fasttext.py check it on every loss and on quantized models):

* ``native`` (default when mdf-kernels has ``FastTextModel``): fastText's predict re-implemented in Rust, the
  model memory-mapped once per process, a batch scored on the kernel pool (``MDF_NUM_THREADS``) without the GIL,
  so a worker's threads and cores all score at once. Measured (benchmarks/bench_fasttext.py, one core each):
  3.1x fastText's own predict loop on a .bin, 1.7x on a quantized .ftz; a 1 GB model adds 12 MB of RSS to a
  process (pages mapped as rows are used), 1,033 MB through the binding.
* ``fasttext``: fastText's own C++ ``predict`` through its Python binding (``fasttext_pybind``, from
  ``mdf-text[quality]``), one call per text. It holds the GIL for every call (fasttext-predict 0.9.2.4 and
  fasttext-wheel 0.9.2: measured, a Python thread makes no progress during a long predict), so a worker's
  threads take turns on the model: more cores need more processes (Ray replicas, ``replicas: N``).

A null text cannot be scored: its row is rejected with the reason ``fasttext_classifier:null_text`` (rows in =
kept + rejected). An empty text is scored like any other (fastText still sees its end-of-line token).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, ValidationInfo, field_validator

from mdf import (
    KERNELS,
    REASON,
    InputFile,
    MissingDependencyError,
    Params,
    Refiner,
    as_numpy,
    has_native_kernel,
    lit,
)
from mdf_text.ops.fasttext_model import LABEL_PREFIX, ModelFileError, check_whole, header, load, load_native
from mdf_text.ops.language import as_utf8

_REQUIRES = {"fasttext_pybind": "mdf-text[quality]"}
_NATIVE = "FastTextModel"


class FastTextClassifier(Refiner):
    """Score texts with a supervised fastText model: a float32 `<prefix>_<label>` column per label (e.g. DCLM)."""

    name = "fasttext_classifier"
    requires: ClassVar[dict[str, str]] = _REQUIRES  # or the Rust kernels: see check_requirements
    cost_class = "model"  # a fastText prediction per text
    reads = {"column": "string|binary"}

    class Params(Params):
        model: InputFile = Field(
            description="a supervised fastText model (.bin or quantized .ftz): a path, or a URL (s3://, https://) "
            "fetched once per machine into the cache; checked at validate time (a fastText file, supervised, with the "
            "named labels)"
        )
        labels: list[str] | None = Field(
            None, min_length=1, description="labels to score, with or without '__label__' (default: all the model's)"
        )
        prefix: str = Field("fasttext", min_length=1, description="score columns are named <prefix>_<label>")
        column: str = Field("text", description="string (or UTF-8 binary) column to classify")
        max_chars: int = Field(
            0, ge=0, description="characters scored from the start of each text (0 = all, as DCLM scores)"
        )
        lowercase: bool = Field(False, description="lowercase before scoring (for models trained on lowercased text)")
        top_label: str | None = Field(None, description="column for the most probable label (unset: none)")
        engine: Literal["auto", "native", "fasttext"] = Field(
            "auto",
            description="native = mdf-kernels (Rust, no GIL, the batch on all kernel threads), fasttext = "
            "fastText's C++ binding (one text at a time, holds the GIL); auto: native when installed",
        )

        @field_validator("model")
        @classmethod
        def _is_classifier(cls, value: str) -> str:
            try:
                header(value)
                check_whole(value)
            except ModelFileError as exc:
                raise ValueError(str(exc)) from None
            return value

        @field_validator("labels")
        @classmethod
        def _known(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
            if value is None or "model" not in info.data:  # no model: its own error is reported
                return value
            wanted = [v.removeprefix(LABEL_PREFIX) for v in value]
            have = header(info.data["model"]).labels
            unknown = [w for w in wanted if w not in have]
            if unknown:
                raise ValueError(
                    f"model {info.data['model']!r} has no label {unknown[0]!r}; its labels: {', '.join(have)}"
                )
            return wanted

    @classmethod
    def written_columns(cls, params: Any) -> dict[str, str]:
        """A float score column per label (the model's, read from its header, or ``labels``), and ``top_label``:
        a later ``score_filter`` on a column that is not a score fails ``validate`` (issue 46)."""
        out = dict.fromkeys(_score_columns(params), "float")
        if params.top_label:
            out[params.top_label] = "string"
        return out

    @classmethod
    def check_requirements(cls) -> None:
        """Either engine will do: the Rust kernels, or else fastText's binding (whose install is named)."""
        if not has_native_kernel(_NATIVE):
            super().check_requirements()

    def setup(self) -> None:
        p = self.params
        self._labels = tuple(p.labels or header(p.model).labels)
        native = p.engine == "native" or (p.engine == "auto" and has_native_kernel(_NATIVE))
        if native and not has_native_kernel(_NATIVE):
            raise MissingDependencyError(
                f"fasttext_classifier engine 'native' needs mdf-kernels with {_NATIVE}: pip install "
                f"{KERNELS['mdf_kernels']} (or pip install ./rust from the mdf repository)"
            )
        self._native_labels: pa.Array | None = None
        if not native:
            super(FastTextClassifier, type(self)).check_requirements()  # the binding's install, named
            self._model = load(p.model)
            return
        self._model = load_native(p.model)
        names = [label.removeprefix(LABEL_PREFIX) for label in self._model.labels]
        self._native_labels = pa.array(names, pa.string())
        self._label_index = [names.index(label) for label in self._labels]

    def output_columns(self) -> list[str]:
        """The score columns this operator writes, in label order."""
        return _score_columns(self.params)

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        p = self.params
        text = batch.column(p.column)
        if self._native_labels is not None:  # the kernel reads newlines as spaces itself: no copy of the text
            lines = prepare(text, p.max_chars, p.lowercase, one_line=False)
            scores, index = self._model.predict(lines, self._label_index, whole_text=True)
            top = self._native_labels.take(index)
        else:
            scores, top = predict(self._model, prepare(text, p.max_chars, p.lowercase), self._labels)
        for name, column in zip(self.output_columns(), scores, strict=True):
            batch = _set(batch, name, column)
        if p.top_label:
            batch = _set(batch, p.top_label, top)
        if text.null_count:
            batch = _set(batch, REASON, pc.if_else(pc.is_null(text), lit("null_text"), pa.scalar(None, pa.string())))
        return batch


def _score_columns(params: Any) -> list[str]:
    """``<prefix>_<label>`` for each label scored (``labels``, else the model's), in label order."""
    return [f"{params.prefix}_{label}" for label in params.labels or header(params.model).labels]


def prepare(text: pa.Array, max_chars: int = 0, lowercase: bool = False, one_line: bool = True) -> pa.Array:
    """Lines as fastText reads them: UTF-8 text, optionally lowercased, first ``max_chars``, newlines -> spaces,
    one ``\\n`` at the end (what fastText's own Python ``predict`` appends). Null stays null.

    ``one_line=False`` leaves the newlines for the native kernel (``predict(..., whole_text=True)`` reads them
    as spaces): the two copies of the column this makes were 10 % of the operator's time on one core and
    slowed each worker when two ran at once (0.06 s a 100 K rows alone, 0.08-0.10 s two at a time)."""
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    text = as_utf8(text)
    if lowercase:
        text = pc.utf8_lower(text)
    if max_chars:
        text = pc.utf8_slice_codeunits(text, 0, max_chars)
    if not one_line:
        return text
    return pc.binary_join_element_wise(pc.replace_substring(text, "\n", " "), lit("\n"), lit(""))


def predict(model: Any, lines: pa.Array, labels: tuple[str, ...]) -> tuple[list[pa.Array], pa.Array]:
    """Probabilities of ``labels`` (float32 columns, in order) and the top label per line.

    Null lines get null scores. fastText's ``predict(line, -1, 0.0, ...)`` returns every label's probability,
    most probable first; a line that yields no prediction at all (no known feature) also gets nulls. The loop
    only calls fastText and collects its pairs; spreading them into columns is vectorised afterwards."""
    call = model.predict
    pairs: list[tuple[float, str]] = []
    counts: list[int] = []
    # bytes, not str: pybind11 hands bytes to fastText's std::string as they are, so no text is decoded to
    # Python and encoded back
    for line in lines.cast(pa.binary()).to_pylist():
        found = call(line, -1, 0.0, "replace") if line is not None else ()
        pairs += found
        counts.append(len(found))
    n, width = len(counts), len(labels)
    per_row = np.asarray(counts, dtype=np.int64)
    matrix = np.zeros((n, width), dtype=np.float32)
    top = pa.nulls(n, pa.string())
    if pairs:
        probs, names = zip(*pairs, strict=True)
        names_arr = pc.utf8_slice_codeunits(pa.array(names, pa.string()), len(LABEL_PREFIX))
        column = as_numpy(pc.index_in(names_arr, value_set=pa.array(labels, pa.string())))
        rows = np.repeat(np.arange(n), per_row)
        wanted = ~np.isnan(column)
        matrix[rows[wanted], column[wanted].astype(np.int64)] = np.asarray(probs, dtype=np.float32)[wanted]
        first = np.cumsum(per_row) - per_row
        top = pc.take(names_arr, pa.array(first, pa.int64(), mask=per_row == 0))
    missing = per_row == 0
    return [pa.array(matrix[:, j], pa.float32(), mask=missing) for j in range(width)], top


def _set(batch: pa.RecordBatch, name: str, column: pa.Array) -> pa.RecordBatch:
    i = batch.schema.get_field_index(name)
    return batch.set_column(i, name, column) if i >= 0 else batch.append_column(name, column)
