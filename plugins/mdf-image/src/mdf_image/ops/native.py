"""The seam between the image operators and ``mdf_kernels``: find a kernel, turn its struct result into columns.

Every kernel takes a binary column and returns a struct whose ``error`` field is set on the rows it could not
handle (``decode_error: ...``, ``too_many_pixels``, ``unsupported_format``, ``empty``) and null elsewhere, so
one helper maps that field to the ``_reason`` convention (a decode error as a short class in ``_reason``, the
decoder's text in ``_reason_detail``) and every refiner rejects bad images the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from mdf import KERNELS, OperatorError, Refiner, lit, native_kernel, with_columns
from mdf_image.ops.reasons import append_reasons


def kernel(name: str) -> Callable[..., Any]:
    """``mdf_kernels.<name>`` for the image operators (core's finder: one install line for every plugin)."""
    return native_kernel(name, "the image operators")


def image_column(batch: pa.RecordBatch, column: str, op: str) -> pa.Array:
    """The binary column ``column`` of ``batch``; an OperatorError that names the fix when it is not one."""
    idx = batch.schema.get_field_index(column)
    if idx < 0:
        raise OperatorError(
            f"operator '{op}': no column '{column}' in the batch (it has {batch.schema.names}); "
            f"set the operator's 'column' parameter to the column holding the encoded image bytes"
        )
    arr = batch.column(idx)
    if not (pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
        raise OperatorError(
            f"operator '{op}': column '{column}' is {arr.type}, not binary; it must hold encoded image bytes "
            "(a reader of this plugin gives an 'image' binary column)"
        )
    return arr


class KernelRefiner(Refiner):
    """A refiner that is one image kernel: ``kernel_name`` on the ``column`` of images, ``columns`` of its
    struct result added, rows with a kernel ``error`` rejected (see :func:`refine_with`). Subclasses declare
    those two and their ``Params`` (which have ``column`` and ``max_pixels``); :meth:`kernel_args` adds any
    further keyword the kernel takes."""

    kernel_name: ClassVar[str] = ""
    columns: ClassVar[tuple[str, ...]] = ()
    requires = KERNELS
    reads: ClassVar[dict[str, str]] = {"column": "binary"}
    modality = "image"  # it decodes the encoded images of ``column``: the planner sizes batches for images

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.writes = dict.fromkeys(cls.columns, "any")  # the kernel's result fields (types: the kernel's)

    def setup(self) -> None:
        self._kernel = kernel(self.kernel_name)

    def kernel_args(self) -> dict[str, Any]:
        return {"max_pixels": self.params.max_pixels}  # type: ignore[attr-defined]

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        blobs = image_column(batch, self.params.column, self.name)  # type: ignore[attr-defined]
        return refine_with(batch, blobs, self._kernel(blobs, **self.kernel_args()), self.columns)


def refine_with(
    batch: pa.RecordBatch, blobs: pa.Array, result: pa.StructArray, fields: tuple[str, ...]
) -> pa.RecordBatch:
    """Add ``fields`` of a kernel ``result`` to ``batch`` and a ``_reason`` column for the rows to reject.

    A row is rejected with the kernel's ``error`` when it has one, and with ``null_image`` when the image
    itself is null (nothing to measure: keeping it would hand later stages a row without the columns they read).
    """
    if isinstance(result, pa.ChunkedArray):
        result = result.combine_chunks()
    batch = with_columns(batch, {f: result.field(f) for f in fields})
    error = result.field("error")
    if blobs.null_count:
        error = pc.if_else(pc.is_null(blobs), lit("null_image"), error)
    if error.null_count == len(error):
        return batch
    return append_reasons(batch, error)
