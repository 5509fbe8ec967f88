"""``gopher_quality_filter`` and ``gopher_repetition_filter``: Gopher's rules (Rae et al. 2021, Table A1) with
DataTrove 0.10.1's definitions and reason names, computed in Rust (mdf-kernels)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mdf_text.ops.quality_base import KernelTextFilter, TextParams

_OFF = " (null disables the rule)"


class GopherQualityFilter(KernelTextFilter):
    """Drop documents failing Gopher's quality rules (word count and length, symbols, bullets, stop words)."""

    name = "gopher_quality_filter"
    kernel = "gopher_quality"

    class Params(TextParams):
        min_doc_words: int | None = Field(50, description="fewest non-symbol words" + _OFF)
        max_doc_words: int | None = Field(100_000, description="most non-symbol words" + _OFF)
        min_avg_word_length: float | None = Field(3, description="lowest mean non-symbol word length" + _OFF)
        max_avg_word_length: float | None = Field(10, description="highest mean non-symbol word length" + _OFF)
        max_symbol_word_ratio: float | None = Field(
            0.1, description="most '#' per word, and most '...' or '…' per word" + _OFF
        )
        max_bullet_lines_ratio: float | None = Field(0.9, description="most lines starting with • or -" + _OFF)
        max_ellipsis_lines_ratio: float | None = Field(0.3, description="most lines ending with ... or …" + _OFF)
        max_non_alpha_words_ratio: float | None = Field(
            0.8, description="LOWEST share of words with a letter (DataTrove's name kept)" + _OFF
        )
        min_stop_words: int | None = Field(2, description="fewest distinct stop words present" + _OFF)
        stop_words: list[str] | None = Field(
            None, description="stop words (case-sensitive); null = the, be, to, of, and, that, have, with"
        )

    def thresholds(self) -> dict[str, Any]:
        return self.params.model_dump(exclude={"column", "language"})


class GopherRepetitionFilter(KernelTextFilter):
    """Drop documents with repeated paragraphs, lines or n-grams beyond Gopher's fractions."""

    name = "gopher_repetition_filter"
    kernel = "gopher_repetition"

    class Params(TextParams):
        dup_line_frac: float | None = Field(0.3, description="most duplicate lines / lines" + _OFF)
        dup_para_frac: float | None = Field(0.3, description="most duplicate paragraphs / paragraphs" + _OFF)
        dup_line_char_frac: float | None = Field(0.2, description="most chars in duplicate lines / chars" + _OFF)
        dup_para_char_frac: float | None = Field(0.2, description="most chars in duplicate paragraphs / chars" + _OFF)
        top_n_grams: list[tuple[int, float]] = Field(
            [(2, 0.2), (3, 0.18), (4, 0.16)], description="(n, most chars of the top n-gram / chars) pairs"
        )
        dup_n_grams: list[tuple[int, float]] = Field(
            [(5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10)],
            description="(n, most chars in repeated n-grams / chars) pairs",
        )

    def thresholds(self) -> dict[str, Any]:
        return self.params.model_dump(exclude={"column", "language"})
