from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute as pc

from mdf import REASON, Filter, Refiner
from mdf.executor.base import run_chain
from mdf.fusion import FusedFilters, fuse_steps
from mdf.operators import BatchContext


class MinLen(Filter):
    """Keep texts of at least 5 characters."""

    name = "min_len"
    fusable = True

    def keep(self, batch):
        n = pc.utf8_length(batch.column("text"))
        return pc.greater_equal(n, 5), pc.if_else(pc.is_null(n), "null", "short")


class NoDigits(Filter):
    """Drop texts with digits."""

    name = "no_digits"
    fusable = True

    def keep(self, batch):
        return pc.invert(pc.match_substring_regex(batch.column("text"), r"\d")), "digits"


class Upper(Refiner):
    """Upper-case the text."""

    name = "upper"

    def refine(self, batch):
        return batch.set_column(batch.schema.get_field_index("text"), "text", pc.utf8_upper(batch.column("text")))


def ops(fusable: bool):
    out = [MinLen(), NoDigits(), Upper(), MinLen()]
    for op in out:
        if isinstance(op, Filter):
            op.fusable = fusable  # instance flag: the same filters, fused or not
    return out


def test_plan_groups_only_runs_of_two_or_more():
    steps = fuse_steps(ops(True))
    assert isinstance(steps[0], FusedFilters) and len(steps[0].filters) == 2
    assert [type(s).__name__ for s in steps[1:]] == ["Upper", "MinLen"]


def test_fused_equals_sequential_rows_reasons_and_counts():
    rng = random.Random(1)
    texts = ["".join(rng.choices("ab1 ", k=rng.randint(0, 9))) for _ in range(500)] + [None]
    batch = pa.RecordBatch.from_pydict({"id": list(range(len(texts))), "text": texts})
    ctx = BatchContext("s", 0, 0)
    results = {}
    for fused in (True, False):
        chain = ops(fused)
        kept, rejected = run_chain(chain, batch, ctx)
        rej = pa.Table.from_batches(rejected).sort_by("id")
        metrics = [(o.metrics.rows_in, o.metrics.rows_out, o.metrics.reasons) for o in chain]
        results[fused] = (kept.to_pylist(), rej.column("id").to_pylist(), rej.column(REASON).to_pylist(), metrics)
    assert results[True] == results[False]
    assert results[True][3][0][2] == {
        "min_len:short": results[True][3][0][0] - results[True][3][0][1] - 1,
        "min_len:null": 1,
    }


def test_without_rejected_output_only_reasons_travel():
    batch = pa.RecordBatch.from_pydict({"text": ["abcdef", "ab", "abc123"]})
    kept, rejected = run_chain(ops(True)[:2], batch, BatchContext("s", 0, 0), keep_rejected=False)
    assert kept.column("text").to_pylist() == ["abcdef"]
    assert rejected[0].schema.names == [REASON]
    assert rejected[0].column(REASON).to_pylist() == ["min_len:short", "no_digits:digits"]
