"""``score_filter``: keep rows by a threshold on a numeric column, typically a model's score.

Model scorers (``fasttext_classifier``, a plugin's transformer scorer) write their scores as columns and keep
every row; choosing the cut is this operator's job. Because the scores are columns of the output, re-choosing
the cut is a cheap run of ``score_filter`` over an earlier run's output: the model never runs again.

Three ways to say the cut, combinable: ``min`` (keep ``>=``), ``max`` (keep ``<=``), and ``top_fraction``: keep
the highest-scoring fraction (DCLM keeps its classifier's top ~10 %). The threshold for a fraction is the
``1 - top_fraction`` quantile of the scores in ``estimate_from`` (usually the same files the reader reads: an
earlier run's output), read once per worker before the first batch: only that column, and a seeded uniform
sample of ``sample_rows`` when there are more, so every worker computes the same threshold. A fraction is of
the non-null scores; ties at the threshold are all kept.

A null score fails every threshold: its row is rejected with the same reason, ``score_filter:<column>``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, ValidationInfo, field_validator, model_validator

from mdf.arrowpy import as_numpy, lit
from mdf.errors import MdfError, RecipeError
from mdf.io.sharding import expand_paths
from mdf.named_files import ReadsFile
from mdf.operators import Filter, Params
from mdf.storage.urls import is_remote

if TYPE_CHECKING:
    import pyarrow.dataset as ds

log = logging.getLogger(__name__)


class ScoreFilter(Filter):
    """Keep rows whose numeric column is >= min, <= max, or in the top fraction; drops say `score_filter:<column>`."""

    name = "score_filter"
    fusable = True  # the threshold is fixed before the first batch: each row is decided alone
    reads: ClassVar[dict[str, str]] = {"column": "number"}

    class Params(Params):
        column: str = Field(description="numeric column holding the score (e.g. fasttext_hq)")
        min: float | None = Field(None, description="keep rows with a score >= min")
        max: float | None = Field(None, description="keep rows with a score <= max")
        top_fraction: float | None = Field(
            None, gt=0, le=1, description="keep the highest-scoring fraction (0.1 = top 10 %), by estimate_from"
        )
        estimate_from: list[Annotated[str, ReadsFile(extensions=(".parquet",))]] = Field(
            [], description="Parquet files, folders or globs whose scores set the top_fraction threshold"
        )
        sample_rows: int = Field(1_000_000, ge=1000, description="most scores read to estimate the threshold")
        seed: int = Field(0, description="seed of the sample when estimate_from holds more than sample_rows")

        @field_validator("estimate_from")
        @classmethod
        def _has_scores(cls, value: list[str], info: ValidationInfo) -> list[str]:
            column = info.data.get("column")
            if not value or column is None:
                return value
            try:
                schema = scored_dataset(expand_paths(value, "estimate_from", (".parquet",))).schema
            except (RecipeError, pa.ArrowException, OSError) as exc:
                raise ValueError(getattr(exc, "detail", str(exc))) from None
            field = schema.field(column) if column in schema.names else None
            if field is None or not (pa.types.is_integer(field.type) or pa.types.is_floating(field.type)):
                found = f"it is {field.type}" if field is not None else f"its columns: {', '.join(schema.names)}"
                raise ValueError(f"no numeric column {column!r} to rank ({found}); point it at the scored output")
            return value

        @model_validator(mode="after")
        def _one_cut(self) -> ScoreFilter.Params:
            if self.min is None and self.max is None and self.top_fraction is None:
                raise ValueError("give min, max or top_fraction (the cut on the score); none is set")
            if self.min is not None and self.max is not None and self.min > self.max:
                raise ValueError(f"min {self.min} is above max {self.max}: no row could pass; swap them")
            if self.top_fraction is not None and not self.estimate_from:
                raise ValueError(
                    "top_fraction needs estimate_from (the Parquet output holding the scores, e.g. the reader's "
                    "paths); or give the threshold itself as min"
                )
            return self

    def setup(self) -> None:
        p = self.params
        self.threshold_min = p.min
        if p.top_fraction is not None:
            cut = estimate_threshold(p.estimate_from, p.column, p.top_fraction, p.sample_rows, p.seed)
            self.threshold_min = cut if p.min is None else max(cut, p.min)
            log.info("score_filter: top %.4g of %s starts at %r", p.top_fraction, p.column, cut)

    def keep(self, batch: pa.RecordBatch) -> tuple[pa.BooleanArray, str]:
        score = batch.column(self.params.column)
        mask: Any = pc.is_valid(score)
        if self.threshold_min is not None:
            mask = pc.and_(mask, pc.greater_equal(score, lit(self.threshold_min)))
        if self.params.max is not None:
            mask = pc.and_(mask, pc.less_equal(score, lit(self.params.max)))
        return pc.fill_null(mask, False), self.params.column


def estimate_threshold(paths: list[str], column: str, fraction: float, sample_rows: int, seed: int = 0) -> float:
    """The score at which the top ``fraction`` of the non-null scores in ``paths`` starts.

    All scores when there are at most ``sample_rows``, else a seeded uniform sample of that many (each batch
    contributes in proportion to its rows), so every worker computes the same threshold."""
    dataset = scored_dataset(expand_paths(paths, "estimate_from", (".parquet",)))
    total = dataset.count_rows()
    rng = np.random.default_rng(seed)
    keep = min(1.0, sample_rows / total) if total else 1.0
    parts: list[np.ndarray] = []
    for batch in dataset.to_batches(columns=[column]):
        values = as_numpy(batch.column(0).drop_null())
        if keep < 1.0:
            values = values[rng.random(len(values)) < keep]
        parts.append(values.astype(np.float64, copy=False))
    sample = np.concatenate(parts) if parts else np.empty(0)
    if not len(sample):
        raise MdfError(f"score_filter: estimate_from {paths} holds no non-null {column!r} score; nothing to rank")
    return float(np.quantile(sample, 1.0 - fraction, method="higher"))


def scored_dataset(files: list[str]) -> ds.Dataset:
    """The Parquet files as one dataset: local paths, or URLs of one object store read through its pyarrow file
    system (:meth:`mdf.storage.Storage.resolve`: footers and the score column's pages by range), so a cut can
    be set from a scored output on S3 without copying it.

    ``pyarrow.dataset`` is imported here, for ``estimate_from`` only: its import imports pandas where pandas is
    installed (0.5 s; :mod:`mdf.pandas_probe`), which a ``min``/``max`` cut never needs."""
    import pyarrow.dataset as ds

    if not any(is_remote(f) for f in files):
        return ds.dataset(files, format="parquet")
    from mdf.storage import default

    resolved = [default().resolve(f) for f in files]
    systems = {id(fs) for fs, _ in resolved}
    if len(systems) > 1 or not all(is_remote(f) for f in files):
        raise RecipeError(
            f"estimate_from mixes file systems ({files[0]!r}, ...); give files of one place (one bucket's URLs, or "
            "local paths)",
            "estimate_from",
        )
    return ds.dataset([path for _, path in resolved], format="parquet", filesystem=resolved[0][0])
