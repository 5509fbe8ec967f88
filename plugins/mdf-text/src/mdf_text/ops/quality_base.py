"""Shared part of the web-text quality filters: a filter whose reasons come from one mdf-kernels call.

The kernels (``mdf_kernels.gopher_quality`` and friends, Rust) compute every statistic of a document in one
pass on the kernel thread pool without the GIL, and return one reason per row (null = keep), named as
DataTrove names them. The operators here only pass the column and the thresholds.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field

from mdf import KERNELS, Filter, Params, native_kernel


class TextParams(Params):
    """What every quality filter reads: the text column and the tokenizer language."""

    column: str = Field("text", description="string column holding the document text")
    language: str = Field(
        "en",
        description="tokenizer: 'en' = spaCy blank('en') rules (DataTrove's English), other codes = Unicode words",
    )


class KernelTextFilter(Filter):
    """A filter deciding every row with one mdf-kernels call; a null text is dropped as ``null_text``."""

    requires: ClassVar[dict[str, str]] = KERNELS
    fusable = True  # decides each row from that row alone
    kernel: ClassVar[str] = ""
    """Name of the mdf_kernels function: ``f(texts, params: dict, language) -> reasons``."""

    @abstractmethod
    def thresholds(self) -> dict[str, Any]:
        """The kernel's params dict (DataTrove's constructor arguments)."""

    def setup(self) -> None:
        self._fn = native_kernel(self.kernel, f"operator '{self.name}'")
        self._thresholds = self.thresholds()

    def keep(self, batch: pa.RecordBatch) -> tuple[pa.BooleanArray, pa.Array]:
        reasons = self._fn(batch.column(self.params.column), self._thresholds, self.params.language)
        return pc.is_null(reasons), reasons
