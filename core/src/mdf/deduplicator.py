"""The Deduplicator operator kind: rows with a key an earlier row had leave with reason ``duplicate``.

A deduplicator writes one method, :meth:`Deduplicator.keys`: ``k`` ``uint64`` keys per row, row-major (an
exact dedup has one, a MinHash-LSH dedup one per band); a row is a duplicate when *any* of its keys was
claimed by an earlier row. The key-state service (:mod:`mdf.state`) decides what "earlier" means, in one of
two modes chosen by the ``mode`` parameter of :class:`DedupParams`:

* ``streaming`` (default): one pass; a key belongs to the first row that *arrives* with it. Inline that is
  the first row in input order; on Ray, batches of different shards race, so *which* copy of a duplicate is
  kept may differ between runs. With one key per row (``exact_dedup``) the kept *count* does not: exactly one
  row per distinct key. With several keys per row (``minhash_dedup``'s bands) similarity is not transitive
  (A~B and B~C without A~C), so the arrival order can change the count by a few rows in a hundred thousand;
  use ``cluster`` mode when two runs must agree exactly. Claims are idempotent per claimant (shard + row
  slot), so a batch retried after a crash is answered as the first time.
* ``cluster``: two passes. Pass one records every (key, position); rows sharing a key are connected,
  transitively (:mod:`mdf.state.cluster`), and pass two keeps the row with the smallest input position of each
  cluster. Deterministic: the same rows inline and on Ray. ``cluster_column`` adds the cluster's root position.

Null keys never make a row a duplicate.

Keys of earlier *runs* (a persistent index, ``mdf_dedup.index``) come in through :meth:`Deduplicator.earlier`:
after this run's own claims, a row whose key the index holds leaves with reason ``<name>:duplicate_of_index``
and the earlier row's source id in ``_duplicate_of`` (streaming mode).

When "was any key claimed first" is not the question (a near-duplicate within a Hamming distance, a band
collision checked against the first owner's signature), a deduplicator overrides :meth:`Deduplicator.matches`
instead: per row, the position of the earlier row it duplicates, asked of its own bucket-side state types
(:mod:`mdf.state.types`) through ``self.state.request``. It lists those types in ``state_types`` and registers
them with the ``mdf_register_state_types`` hook. Either way the base class splits the batch and writes the
reasons (``<name>:<reason>``); no deduplicator touches the split.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field

from mdf.arrowpy import as_numpy, lit
from mdf.errors import OperatorError
from mdf.metrics import REASON
from mdf.operators import BatchContext, Operator, Params
from mdf.state.cluster import positions as row_positions
from mdf.state.types import NO_MATCH, StateType


class DedupParams(Params):
    """Parameters every deduplicator has; subclass it for an operator's own."""

    mode: Literal["streaming", "cluster"] = Field(
        "streaming",
        description="streaming: one pass, the first row to arrive is kept; cluster: two passes, the row with the "
        "smallest input position is kept (same rows inline and on Ray)",
    )
    cluster_column: str | None = Field(
        None, description="cluster mode: add this uint64 column holding the position of the cluster's kept row"
    )


DUPLICATE_OF = "_duplicate_of"
"""Column of an index-rejected row: the source id of the earlier run's copy (``index_source``)."""


class Deduplicator(Operator):
    """Keeps the first row seen for each key; the key-state service decides what "seen" means."""

    kind = "deduplicator"
    cost_class: ClassVar[str] = "deduplication"
    Params = DedupParams
    reason: ClassVar[str] = "duplicate"
    """What follows ``<name>:`` in the reason of a dropped row."""
    state_types: ClassVar[tuple[type[StateType], ...]] = ()
    """The bucket-side state types :meth:`matches` asks (each registered by ``mdf_register_state_types``)."""

    writes: ClassVar[dict[str, str] | None] = {"cluster_column": "integer"}
    index_reason: ClassVar[str] = "duplicate_of_index"
    """What follows ``<name>:`` for a row whose key an earlier run kept (see :meth:`earlier`)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.state: Any = None
        self.namespace = self.name
        self._prepared: tuple[pa.RecordBatch, pa.Array] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name and cls.keys is Deduplicator.keys and cls.matches is Deduplicator.matches:
            raise TypeError(f"deduplicator {cls.__name__} must override keys() or matches()")

    @classmethod
    def rejected_columns(cls, params: Params) -> dict[str, str]:
        """With a persistent ``index:``, every rejected row names the earlier copy's source id."""
        return {DUPLICATE_OF: "string"} if getattr(params, "index", None) else {}

    def keys(self, batch: pa.RecordBatch) -> pa.Array:
        """Return ``k`` ``uint64`` keys per row, row-major (``k * num_rows`` values; null = no key)."""
        raise OperatorError(f"deduplicator '{self.name}' has no keys(); it runs in streaming mode through matches()")

    def attach_state(self, state: Any, namespace: str | None = None) -> None:
        """Called by the executor: the key-state client and this operator's namespace in it (unique per recipe
        position, so two dedups of the same kind keep separate key sets)."""
        self.state = state
        self.namespace = namespace or self.name

    def claims_keys(self) -> bool:
        """Whether a streaming batch is decided by claiming :meth:`keys` (not by :meth:`matches`): then the keys
        can be made before the batch's turn (:meth:`prepare`). Override with the condition under which your
        :meth:`matches` returns ``None``."""
        return type(self).matches is Deduplicator.matches

    def prepare(self, batch: pa.RecordBatch, ctx: BatchContext) -> None:
        """Make the batch's keys now, before the executor orders it. The inline executor runs a streaming
        deduplicator's batches one at a time in input order (its turnstile), but hashing touches no key state:
        made here, in the shard's own thread, it runs on every core, and only the claims wait for the turn.
        :meth:`_apply` uses keys made here for the same batch object; its time counts as the operator's."""
        self._prepared = None
        if self.mode != "streaming" or not batch.num_rows or not self.claims_keys():
            return
        self.ensure_setup()
        start = time.perf_counter()
        with self.errors_named(ctx):
            self._prepared = (batch, self.keys(batch))
        self.metrics.time_s += time.perf_counter() - start

    def matches(self, batch: pa.RecordBatch, rows: np.ndarray) -> np.ndarray | None:
        """Override for more than first claims: per row, the position (``rows`` holds the batch's own) of the
        earlier row it duplicates, or :data:`mdf.NO_MATCH` to keep it; ``None`` falls back to claiming
        :meth:`keys`. Streaming mode only. ``cluster_column`` then gets the matched position (the row's own when
        kept). Retries must answer as the first time, which the state types' own idempotency provides."""
        return None

    def earlier(
        self, batch: pa.RecordBatch, rows: np.ndarray, keys: np.ndarray, valid: np.ndarray, claimed: np.ndarray
    ) -> tuple[np.ndarray, pa.Array] | None:
        """Override to consult the keys earlier runs kept (streaming mode, after this run's claims): per row,
        True where one of its keys is there, and per row the earlier row's source id (null elsewhere), which the
        rejected rows carry as ``_duplicate_of``. ``keys``/``valid``/``claimed`` are per key (``k`` a row,
        row-major); ``claimed``: this run claimed the key first (what an index in update mode adds). ``None``:
        no earlier runs (the default)."""
        return None

    @property
    def mode(self) -> str:
        return getattr(self.params, "mode", "streaming")

    def _apply(self, batch: pa.RecordBatch, ctx: BatchContext) -> tuple[pa.RecordBatch, pa.RecordBatch | None]:
        if self.state is None:
            raise OperatorError(f"deduplicator '{self.name}' has no key state attached by the executor")
        n = batch.num_rows
        if self.mode == "streaming" and n:
            rows = row_positions(ctx.shard_index, ctx.row_offset, n)
            match = self.matches(batch, rows)
            if match is not None:
                return self._matched(batch, rows, np.asarray(match, dtype=np.uint64))
        prepared, self._prepared = self._prepared, None
        keys = prepared[1] if prepared is not None and prepared[0] is batch else self.keys(batch)
        if isinstance(keys, pa.ChunkedArray):
            keys = keys.combine_chunks()
        if n == 0 or len(keys) % n:
            raise OperatorError(f"deduplicator '{self.name}': keys() gave {len(keys)} keys for {n} rows")
        k = len(keys) // n
        valid = np.ones(len(keys), dtype=bool) if not keys.null_count else as_numpy(keys.is_valid())
        values = as_numpy(keys.fill_null(0).cast(pa.uint64()))
        if self.mode == "cluster":
            return self._cluster(batch, ctx, values, valid, k)
        # claimant slot of key j of row i: (row_offset + i) * k + j, unique within the shard
        slots = np.arange(ctx.row_offset * k, (ctx.row_offset + n) * k, dtype=np.uint64)
        new = np.ones(len(values), dtype=bool)
        if valid.any():
            new[valid] = self.state.claim(self.namespace, values[valid], ctx.shard_id, slots[valid])
        is_new = new.reshape(n, k).all(axis=1)
        found = self.earlier(batch, row_positions(ctx.shard_index, ctx.row_offset, n), values, valid, new & valid)
        if found is None:
            return self._split(batch, is_new)
        hit, duplicate_of = found
        return self._split(batch, is_new & ~hit, hit, duplicate_of)

    def _matched(
        self, batch: pa.RecordBatch, rows: np.ndarray, match: np.ndarray
    ) -> tuple[pa.RecordBatch, pa.RecordBatch | None]:
        if match.shape != rows.shape:
            raise OperatorError(f"deduplicator '{self.name}': matches() gave {len(match)} values for {len(rows)} rows")
        is_new = match == NO_MATCH
        column = getattr(self.params, "cluster_column", None)
        if column:
            batch = batch.append_column(column, pa.array(np.where(is_new, rows, match), type=pa.uint64()))
        return self._split(batch, is_new)

    def _cluster(
        self, batch: pa.RecordBatch, ctx: BatchContext, values: np.ndarray, valid: np.ndarray, k: int
    ) -> tuple[pa.RecordBatch, pa.RecordBatch | None]:
        rows = row_positions(ctx.shard_index, ctx.row_offset, batch.num_rows)
        key_rows = np.repeat(rows, k)
        roots = self.state.cluster(self.namespace, values[valid], key_rows[valid], rows)
        if roots is None:  # pass one: keys recorded; the rows go nowhere (this pass writes nothing)
            return batch, None
        column = self.params.cluster_column  # type: ignore[attr-defined]
        if column:
            batch = batch.append_column(column, pa.array(roots, type=pa.uint64()))
        return self._split(batch, roots == rows)

    def _split(
        self,
        batch: pa.RecordBatch,
        is_new: np.ndarray,
        in_index: np.ndarray | None = None,
        duplicate_of: pa.Array | None = None,
    ) -> tuple[pa.RecordBatch, pa.RecordBatch | None]:
        """Kept rows, and the others with reason ``<name>:<why>`` (only the reasons when nothing writes them);
        with ``in_index`` (rows an earlier run kept) their reason is ``<name>:duplicate_of_index`` and every
        rejected row gets ``_duplicate_of``."""
        kept_n = int(is_new.sum())
        if kept_n == batch.num_rows:
            return batch, None
        gone = pa.array(~is_new)
        reason: pa.Array = pa.repeat(lit(f"{self.name}:{self.reason}"), batch.num_rows - kept_n)
        if in_index is not None:
            reason = pc.if_else(pa.array(in_index[~is_new]), lit(f"{self.name}:{self.index_reason}"), reason)
        if self.keep_rejected:
            dup = batch.filter(gone).append_column(REASON, reason)
            if in_index is not None and duplicate_of is not None:
                dup = dup.append_column(DUPLICATE_OF, duplicate_of.filter(gone))
        else:  # nothing will write the dropped rows: count them by their reason, copy nothing
            dup = pa.RecordBatch.from_arrays([reason], names=[REASON])
        return batch.filter(pa.array(is_new)), dup
