"""``c4_quality_filter``: C4's line cleaning and document rules (Raffel et al. 2020) as DataTrove 0.10.1's
``C4QualityFilter`` applies them, in Rust (mdf-kernels).

A refiner rather than a filter, because it rewrites ``text`` (bad lines and citations removed) and drops
documents; the lines removed per rule are added to the operator's ``counters`` (DataTrove's stat names).
"""

from __future__ import annotations

from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field

from mdf import KERNELS, REASON, Refiner, native_kernel
from mdf_text.ops.quality_base import TextParams


class C4QualityFilter(Refiner):
    """Remove C4's bad lines (no end mark, short, javascript, policy, citations) and drop C4-failing pages."""

    name = "c4_quality_filter"
    cost_class = "filter"  # a refiner only to rewrite lines; per row it is C4's filter rules
    requires: ClassVar[dict[str, str]] = KERNELS

    class Params(TextParams):
        split_paragraph: bool = Field(True, description="rules per line (C4); false = per spaCy sentence")
        remove_citations: bool = Field(True, description="remove [1], [edit], [citation needed]")
        filter_no_terminal_punct: bool = Field(
            True, description="remove lines not ending in . ? ! \" ' (or ending in ...); FineWeb sets false"
        )
        min_num_sentences: int = Field(5, ge=-1, description="drop documents with fewer sentences left; -1 = off")
        min_words_per_line: int = Field(3, ge=-1, description="remove lines with fewer words; -1 = off")
        max_word_length: int = Field(1000, ge=-1, description="remove lines with a longer word; -1 = off")
        filter_lorem_ipsum: bool = Field(True, description="drop documents containing 'lorem ipsum'")
        filter_javascript: bool = Field(True, description="remove lines mentioning 'javascript'")
        filter_curly_bracket: bool = Field(True, description="drop documents containing '{'")
        filter_policy: bool = Field(True, description="remove lines with cookie / privacy / terms phrases")

    def setup(self) -> None:
        self._fn = native_kernel("c4_quality", f"operator '{self.name}'")
        self._thresholds = self.params.model_dump(exclude={"column", "language"})

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        col = self.params.column
        idx = batch.schema.get_field_index(col)
        text = batch.column(idx)
        cleaned, reasons, counts = self._fn(text, self._thresholds, self.params.language)
        for k, v in counts.items():
            self.metrics.count(k, v)
        # dropped rows keep their original text in the rejected output
        new_text = pc.if_else(pc.is_null(reasons), cleaned.cast(text.type), text)
        batch = batch.set_column(idx, batch.schema.field(idx), new_text)
        return batch.append_column(REASON, reasons)
