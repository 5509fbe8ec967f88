"""Adds ``word_count_refiner``: a ``word_count`` column, and rejects rows with too few words."""

import pyarrow.compute as pc
from pydantic import Field

from mdf import Params, Refiner, hookimpl


class WordCountRefiner(Refiner):
    """Add the number of whitespace-separated words; reject texts with fewer than min_words."""

    name = "word_count_refiner"

    class Params(Params):
        column: str = Field("text", description="string column to count words in")
        min_words: int = Field(0, ge=0, description="rows with fewer words are rejected")

    def refine(self, batch):
        words = pc.list_value_length(pc.utf8_split_whitespace(batch.column(self.params.column)))
        few = pc.less(pc.fill_null(words, 0), self.params.min_words)
        reason = pc.if_else(few, "too_few_words", None)
        return batch.append_column("word_count", words).append_column("_reason", reason)


@hookimpl
def mdf_register_operators(registry):
    registry.add(WordCountRefiner)
