"""``fineweb_quality_filter``: FineWeb's line rules (Penedo et al. 2024) with DataTrove 0.10.1's definitions
and reason names, computed in Rust (mdf-kernels)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mdf_text.ops.quality_base import KernelTextFilter, TextParams


class FineWebQualityFilter(KernelTextFilter):
    """Drop documents with few punctuated lines, many short lines, duplicated lines or list-like layout."""

    name = "fineweb_quality_filter"
    kernel = "fineweb_quality"

    class Params(TextParams):
        line_punct_thr: float = Field(0.12, description="lowest share of lines ending in terminal punctuation")
        line_punct_exclude_zero: bool = Field(False, description="keep documents where that share is exactly 0")
        stop_chars: list[str] | None = Field(None, description="line endings that count; null = DataTrove's set")
        short_line_thr: float = Field(0.67, description="highest share of short lines")
        short_line_length: int = Field(30, ge=0, description="a line of at most this many characters is short")
        char_duplicates_ratio: float = Field(0.01, description="highest chars in duplicate lines / chars")
        new_line_ratio: float = Field(0.3, description="highest newlines / words")

    def thresholds(self) -> dict[str, Any]:
        return self.params.model_dump(exclude={"column", "language"})
