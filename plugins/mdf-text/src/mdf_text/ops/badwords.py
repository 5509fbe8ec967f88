"""``bad_words_filter``: C4's bad-words rule as DataTrove 0.10.1's ``C4BadWordsFilter`` applies it.

Word lists are not shipped (LDNOOBW-style lists carry their own licence): the recipe names one file per
language. A row's language comes from a column (``language`` by default). Matching is RE2 over the lower-cased
text, one pass per language present in the batch; words must be flanked by non-word characters, as DataTrove's
``(?:\\W|^)(...)(?:\\W|$)``, except for ja, th and zh, which are matched anywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, FilePath

from mdf import Filter, OperatorError, Params, lit

# Python's \w is Unicode letters, digits and '_'; RE2's \w is ASCII only, so spell Python's out.
_NON_WORD = r"[^\pL\pN_]"
_NO_SPACES = {"ja", "th", "zh"}
# DataTrove drops these from every list: common subwords in languages written without spaces
_ALLOWLIST = {"sm", "グロ", "女の子", "性"}


def read_words(path: Path) -> list[str]:
    words = {line.strip() for line in path.read_text(encoding="utf-8").splitlines()}
    return sorted(w for w in words - _ALLOWLIST if w)


def pattern(words: list[str], lang: str) -> str:
    alt = "|".join(re.escape(w) for w in words)
    return alt if lang in _NO_SPACES else f"(?:{_NON_WORD}|^)(?:{alt})(?:{_NON_WORD}|$)"


class BadWordsFilter(Filter):
    """Drop documents containing a word of their language's bad-word list (C4); keep_fraction keeps some."""

    name = "bad_words_filter"
    fusable = True

    class Params(Params):
        column: str = Field("text", description="string column holding the document text")
        word_lists: dict[str, FilePath] = Field(
            description="language code -> word-list file (one word or phrase a line), e.g. {en: lists/en.txt}"
        )
        language_column: str | None = Field("language", description="column with each row's language code")
        default_language: str = Field("en", description="language of rows without one (or without the column)")
        keep_fraction: float = Field(0.0, ge=0, le=1, description="share of matching documents kept anyway")
        seed: int = Field(0, description="seed of the keep_fraction draw (a hash of seed and text, per row)")
        fail_on_missing_language: bool = Field(
            True, description="fail when a row's language has no list (false: keep such rows)"
        )

    def setup(self) -> None:
        self._patterns = {lang: pattern(read_words(Path(path)), lang) for lang, path in self.params.word_lists.items()}

    def _languages(self, batch: pa.RecordBatch) -> pa.Array:
        p = self.params
        n = batch.num_rows
        if p.language_column is None or p.language_column not in batch.schema.names:
            return pa.repeat(lit(p.default_language), n)
        return pc.fill_null(batch.column(p.language_column).cast(pa.string()), p.default_language)

    def keep(self, batch: pa.RecordBatch) -> tuple[pa.BooleanArray, pa.Array]:
        p = self.params
        text = batch.column(p.column)
        lower = pc.utf8_lower(text)
        langs = self._languages(batch)
        hit = pa.repeat(lit(False), batch.num_rows)
        for lang in pc.unique(langs).to_pylist():
            rx = self._patterns.get(lang)
            if rx is None:
                if p.fail_on_missing_language:
                    raise OperatorError(
                        f"bad_words_filter: no word list for language {lang!r}; add it to word_lists "
                        "or set fail_on_missing_language: false"
                    )
                continue
            rows = pc.equal(langs, lit(lang))
            found = pc.fill_null(pc.match_substring_regex(lower, rx), False)
            hit = pc.or_(hit, pc.and_(rows, found))
        if p.keep_fraction > 0:
            hit = pc.and_(hit, pc.invert(self._draw_keep(text)))
        keep = pc.and_(pc.invert(hit), pc.is_valid(text))
        reason = pc.if_else(pc.is_null(text), lit("null_text"), lit("document_removed_with_badwords"))
        return keep, reason

    def _draw_keep(self, text: pa.Array) -> pa.BooleanArray:
        """True for the rows a keep_fraction draw keeps: a hash of (seed, text), so the same row gets the same
        draw however the data is batched (DataTrove draws from one sequential generator instead)."""
        import mdf_kernels

        salted = pc.binary_join_element_wise(lit(str(self.params.seed)), pc.fill_null(text, ""), lit("\x00"))
        h = pc.cast(pc.shift_right(mdf_kernels.hash64(salted), pa.scalar(11, pa.uint64())), pa.float64())
        return pc.less(pc.divide(h, lit(float(1 << 53))), lit(self.params.keep_fraction))
