"""Entry point ``text``: registers the text operators."""

from __future__ import annotations

from mdf import hookimpl
from mdf.registry import Registry
from mdf_text.ops.badwords import BadWordsFilter
from mdf_text.ops.c4 import C4QualityFilter
from mdf_text.ops.fineweb import FineWebQualityFilter
from mdf_text.ops.gopher import GopherQualityFilter, GopherRepetitionFilter
from mdf_text.ops.length import TextLengthFilter
from mdf_text.ops.pii import PiiRefiner
from mdf_text.ops.url import UrlFilter


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add(TextLengthFilter)
    registry.add(UrlFilter)
    for op in (
        GopherQualityFilter,
        GopherRepetitionFilter,
        C4QualityFilter,
        FineWebQualityFilter,
        BadWordsFilter,
        PiiRefiner,
    ):
        registry.add(op)
