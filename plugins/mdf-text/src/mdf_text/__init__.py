"""mdf-text: text operators for mdf, vectorised over Arrow string columns."""

from mdf_text.ops.html import HtmlExtract
from mdf_text.ops.length import TextLengthFilter
from mdf_text.ops.url import UrlFilter

__all__ = ["HtmlExtract", "TextLengthFilter", "UrlFilter"]
