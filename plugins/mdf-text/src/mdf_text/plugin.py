"""Entry point ``text``: registers the text operators."""

from __future__ import annotations

from mdf import hookimpl
from mdf.registry import Registry
from mdf_text.ops.html import HtmlExtract
from mdf_text.ops.length import TextLengthFilter
from mdf_text.ops.url import UrlFilter


@hookimpl
def mdf_register_operators(registry: Registry) -> None:
    registry.add(HtmlExtract)
    registry.add(TextLengthFilter)
    registry.add(UrlFilter)
