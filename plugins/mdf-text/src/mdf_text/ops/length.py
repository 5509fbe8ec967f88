"""``text_length_filter``: keep texts whose length in Unicode code points is within bounds."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from mdf import Filter, Params
from pydantic import Field, model_validator


class TextLengthFilter(Filter):
    """Keep rows whose text has min_length..max_length characters (code points); null text is rejected."""

    name = "text_length_filter"

    class Params(Params):
        column: str = Field("text", description="string column to measure")
        min_length: int = Field(0, ge=0, description="fewest characters kept (inclusive)")
        max_length: int | None = Field(None, ge=0, description="most characters kept (inclusive); none = no cap")

        @model_validator(mode="after")
        def _bounds(self) -> TextLengthFilter.Params:
            if self.max_length is not None and self.max_length < self.min_length:
                raise ValueError(f"max_length ({self.max_length}) < min_length ({self.min_length}); swap them")
            return self

    def keep(self, batch: pa.RecordBatch) -> tuple[pa.BooleanArray, pa.Array]:
        p = self.params
        text = batch.column(p.column)
        length = (
            pc.utf8_length(text)
            if pa.types.is_string(text.type) or pa.types.is_large_string(text.type)
            else pc.binary_length(text)
        )
        short = pc.less(length, p.min_length)
        long = pc.greater(length, p.max_length) if p.max_length is not None else pa.repeat(False, len(text))
        keep = pc.invert(pc.or_(short, long))
        reason = pc.if_else(pc.is_null(text), "null_text", pc.if_else(short, "too_short", "too_long"))
        return keep, reason
