"""``text_length_filter``: keep texts whose length in Unicode code points is within bounds."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, model_validator

from mdf import Filter, Params, lit


class TextLengthFilter(Filter):
    """Keep rows whose text has min_length..max_length characters (code points); null text is rejected."""

    name = "text_length_filter"
    fusable = True  # decides each row from that row alone
    reads = {"column": "string|binary"}

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
        length = self._lengths(text)
        short = pc.less(length, lit(p.min_length))
        long = pc.greater(length, lit(p.max_length)) if p.max_length is not None else lit(False)
        keep = pc.invert(pc.or_(short, long))
        reason = pc.if_else(pc.is_null(text), lit("null_text"), pc.if_else(short, lit("too_short"), lit("too_long")))
        return keep, reason

    def _lengths(self, text: pa.Array) -> pa.Array:
        """Code-point lengths, computed only where byte lengths cannot decide.

        A UTF-8 code point takes 1 to 4 bytes, so ``bytes/4 <= chars <= bytes``. A text with
        ``4 * min_length <= bytes <= max_length`` is kept, one with ``bytes < min_length`` is too short and one
        with ``bytes > 4 * max_length`` too long, whatever its characters: byte length (read from the offsets,
        free) stands in for those rows, and only the rest are decoded. On web text that is a few percent of
        the rows, which removes the filter's one pass over every byte.
        """
        blen = pc.binary_length(text)
        if not (pa.types.is_string(text.type) or pa.types.is_large_string(text.type)):
            return blen
        lo, hi = self.params.min_length, self.params.max_length
        near_min = pc.less(blen, lit(4 * lo))
        if hi is not None:
            near_max = pc.and_(pc.greater(blen, lit(hi)), pc.less_equal(blen, lit(4 * hi)))
            near_min = pc.or_(near_min, near_max)
        undecided = pc.fill_null(pc.and_(pc.greater_equal(blen, lit(lo)), near_min), False)
        if not pc.any(undecided).as_py():
            return blen
        exact = pc.utf8_length(pc.filter(text, undecided))
        return pc.replace_with_mask(blen, undecided, exact.cast(blen.type))
