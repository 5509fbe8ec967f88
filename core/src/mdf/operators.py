"""Operator base classes and the batch contract.

A batch is a ``pyarrow.RecordBatch``. Operators work on whole columns; each kind has exactly one abstract
method and the base class owns the loop around it: counting, timing and routing dropped rows (with a reason)
to the rejected output. That keeps every shipped operator small and makes the accounting
``rows in = kept + rejected`` hold by construction rather than by each author's care.

A row is rejected through one convention everywhere (readers, refiners, filters): a string column named
``_reason`` whose non-null entries mark rows that leave the pipeline, e.g. ``text_length_filter:too_short``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shlex
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict

from mdf.arrowpy import lit
from mdf.errors import MissingDependencyError, OperatorError
from mdf.metrics import REASON, REASON_DETAIL, OperatorMetrics


class Params(BaseModel):
    """Base of every operator's parameter model: typed, documented, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class BatchContext:
    """Where a batch comes from, so stateful operators can name a row (``shard_id`` + ``row_offset + i``).

    ``shard_index`` is the shard's place in the reader's stable shard list: with ``row_offset`` it orders rows
    by input position, which cluster-mode dedup uses to keep the same row on every executor."""

    shard_id: str
    batch_index: int
    row_offset: int
    shard_index: int = 0


class Component:
    """What operators, readers and writers share: a registry name, typed params, optional dependencies."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = "component"
    Params: ClassVar[type[Params]] = Params
    requires: ClassVar[dict[str, str]] = {}

    def __init__(self, **params: Any) -> None:
        self.check_requirements()
        self.params = self.Params(**params)

    @classmethod
    def check_requirements(cls) -> None:
        """Raise an ImportError that names the ``pip install`` for any missing optional dependency."""
        missing = [mod for mod in cls.requires if importlib.util.find_spec(mod) is None]
        if missing:
            specs = dict.fromkeys(cls.requires[mod] for mod in missing)  # an extra may provide several modules
            raise MissingDependencyError(
                f"{cls.kind} '{cls.name}' needs {', '.join(missing)}: pip install {' '.join(map(shlex.quote, specs))}"
            )

    @classmethod
    def doc(cls) -> str:
        """First line of the class docstring, for ``mdf ops``."""
        return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""


class Operator(Component, ABC):
    """Common part of every operator kind.

    Subclasses set ``name`` (the registry key), may nest a ``Params`` model, may list optional dependencies in
    ``requires`` (``{"import_name": "pip spec"}``), and implement their kind's one abstract method. Heavy state
    (models, tables) belongs in :meth:`setup`, which runs once in the worker that uses the operator, so operator
    instances stay cheap to construct during recipe validation.

    Two declarations size the batches an operator gets (the batch-size planner reads them from the class, and
    never guesses from the bytes); ``mdf ops`` shows both, marking the ones left at their default:

    * :attr:`modality`: ``"text"`` on this base class, explicitly: an operator that reads plain columns
      (strings, numbers) relies on it. One that decodes media in a column it reads (an image, a clip) must
      declare it (``modality = "image"``), or its batches are sized for text.
    * :attr:`cost_class`: each kind's base class sets its default (``filter`` for filters, ``deduplication``
      for deduplicators, ``cleaning`` for refiners); an operator heavier or lighter per row than its kind
      declares its own (``model``, ``embedding``, ``extraction``, or one a plugin registers).
    """

    kind: ClassVar[str] = "operator"
    cost_class: ClassVar[str] = "cleaning"
    """How heavy a row is for it: the name of a registered :class:`mdf.CostClass` (``model``, ``embedding``,
    ``extraction``, ``filter``, ``deduplication``, ``cleaning``), whose weight is added to the batch's
    complexity: heavier pipelines get smaller batches."""
    modality: ClassVar[str] = "text"
    """The kind of data in the columns it reads: the name of a registered :class:`mdf.Modality`. ``text``
    (plain columns) unless it decodes media; the batch-size planner sizes batches for the heaviest modality the
    reader and the operators declare."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for attr in ("cost_class", "modality"):
            value = getattr(cls, attr)
            if not isinstance(value, str) or not value.isidentifier():
                raise TypeError(
                    f"{cls.__name__}.{attr} = {value!r}; name a registered {attr.replace('_', ' ')} "
                    "(a snake_case string such as 'image' or 'model')"
                )

    reads: ClassVar[dict[str, str]] = {}
    """Columns the operator reads and the types it accepts, checked against the input before any work (by
    ``validate`` and ``run``) and shown by ``mdf ops``. Keys name a parameter whose value is the column (or a
    list of columns), or else are a fixed column name; values are ``|``-separated type families: ``string``,
    ``binary``, ``integer``, ``float``, ``number``, ``bool``, ``list``, ``struct``, ``any``, and ``path``: a
    string column naming files the operator loads, whose sizes the batch-size planner counts as row bytes.
    Example: ``reads = {"column": "string"}``."""

    writes: ClassVar[dict[str, str] | None] = {}
    """Columns the operator adds, in the same form as :attr:`reads` (one type family each). ``None`` means
    "cannot say", and the column check stops there. :class:`Refiner` defaults to ``None``."""

    @classmethod
    def written_columns(cls, params: Params) -> dict[str, str] | None:
        """The columns this operator adds (``{column: type family}``) where they depend on more than a parameter's
        value, so :attr:`writes` cannot say them (a classifier's score column per label of its model); ``None``:
        :attr:`writes` says them. Read by the column check before any work, so a later operator reading a
        column of the wrong type fails ``validate``, not the run."""
        return None

    @classmethod
    def rejected_columns(cls, params: Params) -> dict[str, str]:
        """Columns this operator adds to the rows it *rejects* (``{column: type family}``, as :attr:`writes`), so
        the one schema of the ``rejected:`` folder (:mod:`mdf.io.rejected`), fixed before any data, holds them;
        a column outside it would only survive inside ``_raw``. Default: none."""
        return {}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.metrics = OperatorMetrics(self.name, self.kind)
        self._ready = False
        self.keep_rejected = True

    def setup(self) -> None:
        """Load heavy state once per worker (models, lookup tables). Called before the first batch."""

    def ensure_setup(self) -> None:
        if not self._ready:
            self.setup()
            self._ready = True

    def process(
        self, batch: pa.RecordBatch, ctx: BatchContext, keep_rejected: bool = True
    ) -> tuple[pa.RecordBatch, pa.RecordBatch | None]:
        """Run the operator on one batch: returns ``(kept, rejected)``; ``rejected`` carries ``_reason``.

        With ``keep_rejected=False`` (no ``rejected:`` output in the recipe) the rejected batch holds only the
        ``_reason`` column: counts and reasons stay exact, and no dropped row is copied for nothing.
        """
        self.ensure_setup()
        start = time.perf_counter()
        self.keep_rejected = keep_rejected  # an _apply that builds its rejected rows itself may skip copying
        with self.errors_named(ctx):
            kept, rejected = self._apply(batch, ctx)
        if rejected is not None and not keep_rejected:
            rejected = reasons_only(rejected)
        self.metrics.record(batch.num_rows, kept.num_rows, rejected, time.perf_counter() - start)
        return kept, rejected

    @contextlib.contextmanager
    def errors_named(self, ctx: BatchContext) -> Iterator[None]:
        """Turn an unexpected exception into an OperatorError naming the operator, shard and batch."""
        try:
            yield
        except (OperatorError, MissingDependencyError):
            raise
        except Exception as exc:
            raise OperatorError(
                f"operator '{self.name}' failed on batch {ctx.batch_index} of shard '{ctx.shard_id}': "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    @abstractmethod
    def _apply(self, batch: pa.RecordBatch, ctx: BatchContext) -> tuple[pa.RecordBatch, pa.RecordBatch | None]:
        """Kind-specific loop around the one abstract method of the kind."""


class Filter(Operator):
    """Keeps rows for which :meth:`keep` is true; dropped rows go to ``rejected`` with a reason."""

    kind = "filter"
    cost_class: ClassVar[str] = "filter"

    @abstractmethod
    def keep(self, batch: pa.RecordBatch) -> pa.BooleanArray | tuple[pa.BooleanArray, pa.Array | str]:
        """Return a boolean mask (null counts as drop), optionally with a reason.

        The reason is one string for every dropped row, or a string array aligned with the batch whose
        entries for dropped rows say why (entries for kept rows are ignored).
        """

    fusable: ClassVar[bool] = False
    """Set True when :meth:`keep` decides each row from that row alone. The executor may then evaluate the
    filter on rows an earlier filter of the same stage already dropped, and apply a run of such filters with
    one copy of the batch instead of one per filter (same result; see :mod:`mdf.fusion`)."""

    def decide(self, batch: pa.RecordBatch) -> tuple[pa.BooleanArray, pa.Array | pa.Scalar]:
        """Call :meth:`keep` and normalise: a null-free mask, and reasons as ``"name:reason"`` strings (an
        array aligned with the batch, or one scalar for every row)."""
        result = self.keep(batch)
        mask, reasons = result if isinstance(result, tuple) else (result, "dropped")
        if isinstance(mask, pa.ChunkedArray):
            mask = mask.combine_chunks()
        if len(mask) != batch.num_rows:
            raise OperatorError(
                f"filter '{self.name}' returned a mask of {len(mask)} rows for a batch of {batch.num_rows}"
            )
        if mask.null_count:
            mask = pc.fill_null(mask, False)
        if isinstance(reasons, str):
            return mask, lit(f"{self.name}:{reasons}")
        name, dropped = lit(self.name), lit("dropped")
        return mask, pc.binary_join_element_wise(name, pc.fill_null(reasons, dropped), lit(":"))

    def _apply(self, batch: pa.RecordBatch, ctx: BatchContext) -> tuple[pa.RecordBatch, pa.RecordBatch | None]:
        mask, reasons = self.decide(batch)
        if pc.all(mask).as_py() is not False:  # every row kept (True), or empty batch (None)
            return batch, None
        dropped = pc.invert(mask)
        n_dropped = batch.num_rows - mask.true_count
        reason_col = pa.repeat(reasons, n_dropped) if isinstance(reasons, pa.Scalar) else pc.filter(reasons, dropped)
        if not self.keep_rejected:  # nothing writes the dropped rows: their reasons, not a copy of them
            return batch.filter(mask), pa.RecordBatch.from_arrays([reason_col], names=[REASON])
        rejected = batch.filter(dropped).append_column(REASON, reason_col)
        return batch.filter(mask), rejected


class Refiner(Operator):
    """Adds or replaces columns; may reject rows by returning a ``_reason`` column (null = keep)."""

    kind = "refiner"
    writes: ClassVar[dict[str, str] | None] = None

    @abstractmethod
    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Return the batch with new or changed columns, same number of rows, same order."""

    def _apply(self, batch: pa.RecordBatch, ctx: BatchContext) -> tuple[pa.RecordBatch, pa.RecordBatch | None]:
        out = self.refine(batch)
        if out.num_rows != batch.num_rows:
            raise OperatorError(
                f"refiner '{self.name}' returned {out.num_rows} rows for {batch.num_rows}; "
                "a refiner must keep every row (reject rows with a '_reason' column instead)"
            )
        return split_rejected(out, prefix=self.name)


def is_declared(cls: type, attr: str) -> bool:
    """Whether ``cls`` sets ``attr`` itself (or a plugin's base of it does), rather than inheriting the default
    of its kind's base class (a core class that sets ``kind``): what ``mdf ops`` and ``mdf plan`` call
    "declared"."""
    owner = next((c for c in cls.__mro__ if attr in vars(c)), None)
    return owner is not None and "kind" not in vars(owner)


def reasons_only(rejected: pa.RecordBatch) -> pa.RecordBatch:
    """The ``_reason`` column of a rejected batch alone: what counting needs when nothing writes the rows."""
    return pa.RecordBatch.from_arrays([rejected.column(REASON)], names=[REASON])


def split_rejected(batch: pa.RecordBatch, prefix: str | None = None) -> tuple[pa.RecordBatch, pa.RecordBatch | None]:
    """Split a batch carrying a ``_reason`` column into ``(kept without _reason, rejected with it)``.

    A ``_reason_detail`` column goes with the rejected rows only."""
    idx = batch.schema.get_field_index(REASON)
    if idx < 0:
        return batch, None
    reason = batch.column(idx)
    kept_batch = batch.remove_column(idx)
    if (detail := kept_batch.schema.get_field_index(REASON_DETAIL)) >= 0:
        kept_batch = kept_batch.remove_column(detail)
    if reason.null_count == batch.num_rows:
        return kept_batch, None
    bad = pc.is_valid(reason)
    if prefix:
        reason = pc.binary_join_element_wise(lit(prefix), reason, lit(":"))
        batch = batch.set_column(idx, REASON, reason)
    return kept_batch.filter(pc.invert(bad)), batch.filter(bad)
