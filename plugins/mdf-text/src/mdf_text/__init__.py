"""mdf-text: text operators for mdf, vectorised over Arrow string columns.

The classes below are imported on first use, so that loading the ``text`` plugin (``mdf_text.plugin``, which
imports this package) for a run imports only the operators its recipe names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "HtmlExtract": "mdf_text.ops.html",
    "TextLengthFilter": "mdf_text.ops.length",
    "UrlFilter": "mdf_text.ops.url",
}

if TYPE_CHECKING:
    from mdf_text.ops.html import HtmlExtract
    from mdf_text.ops.length import TextLengthFilter
    from mdf_text.ops.url import UrlFilter


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mdf_text' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = ["HtmlExtract", "TextLengthFilter", "UrlFilter"]
