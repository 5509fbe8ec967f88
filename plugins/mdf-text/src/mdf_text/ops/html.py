"""``html_extract``: the main text and title of HTML pages, by the Rust kernel ``mdf_kernels.html_extract``.

The kernel decodes binary pages as a browser would (byte-order mark, the HTTP charset from ``charset_column``,
a ``<meta>`` prescan, chardetng's guess), tokenizes them with a WHATWG tokenizer, drops page furniture by tag,
ARIA role, class/id words, hidden styles and link density, and keeps the best-scoring block of prose with its
sibling paragraphs (Mozilla Readability's rules, plus blocks of prose wrapped too deep for those rules to see:
``favor`` sets how short such a block may be, or turns them off with ``precision``; ``balanced`` and ``recall``
also keep short bullet lists, one-line sentences in their own ``<div>``, and a data table with its heading
beside the article). It runs on all kernel threads (``MDF_NUM_THREADS``) without the GIL. A page without main
text (no block of 25 characters) gets an empty ``text``, so a later ``text_length_filter`` drops it with its
reason; a null page gets null columns. Only ``favor="recall"`` gives such a page its body text instead, when
that is short (under 500 characters) and at most half links: a one-line note is what recall asks for, while the
empty text stays the filter signal in the other modes (stubs, galleries, error and login pages).

Deterministic: a page longer than ``max_bytes`` is extracted from its first ``max_bytes`` bytes (a budget in
bytes, not time, so the output never depends on machine load); such pages are counted (``pages_truncated``)
and, with ``truncated_column``, flagged per row. A page whose extraction panics in the kernel (a bug) is one
rejected row, ``html_extract:kernel_error`` (the panic message in ``_reason_detail``, the rows counted in
``kernel_errors``); the batch goes on.

``blocks: model`` (the default) keeps the text blocks that the learned model shipped in the kernel scores high
enough (gradient-boosted trees over each block's text, link, tag-path, class/id-word and neighbour features,
and what the rules above chose; ``benchmarks/train_html_blocks.py``), asking less of a block inside the rules'
choice than of one elsewhere on the page. Why it is the default: held out by site (5 folds) it keeps the rules'
figure on the AEB and is far ahead on trafilatura's many-language evaluation pages, the kind of page nobody tuned
for (``benchmarks/bench_html_quality.py --cv 5``; figures in the README). ``blocks: rules`` is the rules alone.
"""

from __future__ import annotations

from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field

from mdf import REASON, REASON_DETAIL, OperatorError, Params, Refiner, lit, native_kernel, with_columns

KERNEL = "html_extract"
METADATA_COLUMNS = ("canonical_url", "html_lang", "description", "encoding")


def html_kernel() -> Any:
    """``mdf_kernels.html_extract``, or a MissingDependencyError naming the install that provides it."""
    return native_kernel(KERNEL, f"operator '{KERNEL}'")


class HtmlExtract(Refiner):
    """Add the main text (paragraphs separated by blank lines) and title of HTML pages; optional head metadata."""

    name = KERNEL
    cost_class = "extraction"  # a whole page parsed per row: ~75x language_id per row on the AEB pages

    class Params(Params):
        column: str = Field("body", description="binary or string column holding the HTML (the warc reader's body)")
        charset_column: str | None = Field(
            None, description="string column with the HTTP charset of each page (the warc reader's charset)"
        )
        text_column: str = Field("text", description="column written with the main text ('' when none)")
        title_column: str = Field("title", description="column written with the <title>")
        with_metadata: bool = Field(
            False, description="also write canonical_url, html_lang, description and encoding (null when absent)"
        )
        max_bytes: int = Field(
            64 << 20, gt=0, description="bytes of HTML read per page; a longer page is extracted from its start"
        )
        truncated_column: str | None = Field(
            None, description="bool column written true where max_bytes cut the page (none = only counted)"
        )
        favor: Literal["precision", "balanced", "recall"] = Field(
            "balanced",
            description="precision: Readability's rules alone (less boilerplate, some article text lost); "
            "recall: also keep shorter blocks of prose next to the article, and the short body of a page "
            "without any block of text (more of it, more boilerplate)",
        )

        blocks: Literal["rules", "model"] = Field(
            "model",
            description="model: the learned block model shipped with the kernel, over the rules' choice (the "
            "default); rules: Readability-style scoring alone (see the module's docstring)",
        )

    @classmethod
    def check_requirements(cls) -> None:
        html_kernel()

    def setup(self) -> None:
        self._kernel = html_kernel()
        # the model's text, parsed by the kernel per call (~157 KB: small beside a batch of pages)
        self._model = (
            native_kernel("html_block_model", "html_extract blocks: model")() if self.params.blocks == "model" else None
        )

    def _column(self, batch: pa.RecordBatch, name: str, what: str, ok: tuple[Any, ...]) -> pa.Array:
        idx = batch.schema.get_field_index(name)
        if idx < 0:
            raise OperatorError(
                f"operator '{self.name}': no column '{name}' in the batch (it has {batch.schema.names}); "
                f"set '{what}' to the column holding {'the HTML' if what == 'column' else 'the HTTP charsets'}"
            )
        arr = batch.column(idx)
        if not any(check(arr.type) for check in ok):
            raise OperatorError(
                f"operator '{self.name}': column '{name}' ({what}) is {arr.type}; it must be "
                f"{' or '.join(c.__name__.removeprefix('is_') for c in ok)}"
            )
        return arr

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        p = self.params
        strings = (pa.types.is_string, pa.types.is_large_string)
        pages = self._column(batch, p.column, "column", (*strings, pa.types.is_binary, pa.types.is_large_binary))
        charsets = self._column(batch, p.charset_column, "charset_column", strings) if p.charset_column else None
        out = self._kernel(
            pages, charsets, with_metadata=p.with_metadata, max_bytes=p.max_bytes, favor=p.favor, model=self._model
        )
        truncated = out.field("truncated")
        self.metrics.count("pages_truncated", pc.sum(truncated).as_py() or 0)
        columns = {p.text_column: out.field("text"), p.title_column: out.field("title")}
        if p.truncated_column:
            columns[p.truncated_column] = pc.fill_null(truncated, False)
        if p.with_metadata:
            columns.update({name: out.field(name) for name in METADATA_COLUMNS})
        errors = out.field("error")
        if errors.null_count < len(errors):  # a kernel panic on some page: reject that row, keep the batch going
            self.metrics.count("kernel_errors", len(errors) - errors.null_count)
            reason = pc.if_else(pc.is_valid(errors), lit("kernel_error"), pa.scalar(None, pa.string()))
            columns[REASON] = reason
            columns[REASON_DETAIL] = errors
        return with_columns(batch, columns)
