"""mdf-text: text operators for mdf, vectorised over Arrow string columns.

The classes below are imported on first use, so that loading the ``text`` plugin (``mdf_text.plugin``, which
imports this package) for a run imports only the operators its recipe names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mdf import lazy_exports

_EXPORTS = {
    "HtmlExtract": "mdf_text.ops.html",
    "TextLengthFilter": "mdf_text.ops.length",
    "UrlFilter": "mdf_text.ops.url",
}

if TYPE_CHECKING:
    from mdf_text.ops.html import HtmlExtract
    from mdf_text.ops.length import TextLengthFilter
    from mdf_text.ops.url import UrlFilter


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = ["HtmlExtract", "TextLengthFilter", "UrlFilter"]
