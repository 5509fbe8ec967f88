"""A streaming deduplicator's keys are made before its turn, so only the claims are ordered (issue 24, W2).

The inline executor runs a streaming deduplicator's batches one at a time in input order (its turnstile). Its
keys (xxh3 of the text for ``exact_dedup``, MinHash signatures and band keys for ``minhash_dedup``) touch no
key state, so :func:`mdf.executor.base.run_chain` has them made by :meth:`mdf.Deduplicator.prepare` in the
shard's own thread before it waits for the turn.
"""

from __future__ import annotations

import contextlib
import threading

import pyarrow as pa
import pyarrow.compute as pc

from mdf import REASON, Deduplicator, Params
from mdf.executor.base import run_chain
from mdf.operators import BatchContext
from mdf.state import KeyState


class CountingDedup(Deduplicator):
    """Duplicates when x % 3 matches an earlier row's; records whether each keys() call was inside the turn."""

    name = "counting_dedup"

    class Params(Params):
        pass

    def __init__(self, **params):
        super().__init__(**params)
        self.calls: list[bool] = []
        self.in_turn = threading.local()

    def keys(self, batch):
        self.calls.append(getattr(self.in_turn, "yes", False))
        return pc.cast(pc.remainder(batch.column("x"), 3), pa.uint64())


def _run(op: CountingDedup, gated: bool) -> tuple[list[int], list[str]]:
    op.attach_state(KeyState.local(), "s0.o0:counting_dedup")

    @contextlib.contextmanager
    def turn(step, ctx):
        op.in_turn.yes = True
        try:
            yield
        finally:
            op.in_turn.yes = False

    kept_all, reasons = [], []
    for i, xs in enumerate(([0, 1, 3, 4], [2, 5, 6])):
        batch = pa.RecordBatch.from_pydict({"x": xs})
        kept, rejected = run_chain([op], batch, BatchContext("s", i, i * 4, 0), True, turn if gated else None)
        kept_all += kept.column("x").to_pylist()
        reasons += [r for b in rejected for r in b.column(REASON).to_pylist()]
    return kept_all, reasons


def test_keys_are_made_once_per_batch_outside_the_turn():
    """Fails with the ``prepare`` call removed from ``run_chain`` (keys() then runs inside the turn: seen)."""
    gated, plain = CountingDedup(), CountingDedup()
    assert _run(gated, True) == _run(plain, False) == ([0, 1, 2], ["counting_dedup:duplicate"] * 4)
    assert gated.calls == [False, False]  # once per batch, never inside the turn
    assert plain.calls == [False, False]


def test_keys_made_for_another_batch_are_not_used():
    """A prepared batch is matched by identity: keys made for one batch never decide another (fails if
    ``_apply`` takes the prepared keys without checking the batch: seen)."""
    op = CountingDedup()
    op.attach_state(KeyState.local(), "ns")
    ctx = BatchContext("s", 0, 0, 0)
    op.prepare(pa.RecordBatch.from_pydict({"x": [0, 0, 0]}), ctx)
    kept, _ = op.process(pa.RecordBatch.from_pydict({"x": [0, 1, 2]}), ctx)
    assert kept.column("x").to_pylist() == [0, 1, 2]
