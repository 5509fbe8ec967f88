from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from mdf import REASON, Deduplicator, Filter, OperatorError, Params, Refiner
from mdf.operators import split_rejected
from mdf.testing import check_operator_contract, run_operator


class EvenFilter(Filter):
    """Keep even numbers."""

    name = "even_filter"

    def keep(self, batch):
        x = batch.column("x")
        return pc.equal(pc.bit_wise_and(x, 1), 0), pc.if_else(pc.is_null(x), "null", "odd")


class BadMaskFilter(Filter):
    """Returns a mask of the wrong length."""

    name = "bad_mask_filter"

    def keep(self, batch):
        return pa.array([True])


class ParseRefiner(Refiner):
    """Parse 's' into int column 'n'; rows that do not parse are rejected."""

    name = "parse_refiner"

    def refine(self, batch):
        s = batch.column("s")
        ok = pc.match_substring_regex(s, r"^\d+$")
        n = pc.if_else(ok, pc.cast(pc.if_else(ok, s, "0"), pa.int64()), None)
        reason = pc.if_else(ok, pa.scalar(None, pa.string()), "not_a_number")
        return batch.append_column("n", n).append_column(REASON, reason)


class ModKeyDedup(Deduplicator):
    """Rows are duplicates when x % 3 matches an earlier row's."""

    name = "mod_key_dedup"

    class Params(Params):
        pass

    def keys(self, batch):
        return pc.cast(pc.remainder(batch.column("x"), 3), pa.uint64())


def test_filter_routes_dropped_rows_with_reasons():
    batch = pa.RecordBatch.from_pydict({"x": [1, 2, None, 4, 5]})
    op = EvenFilter()
    kept, rejected = run_operator(op, batch)
    assert kept.column("x").to_pylist() == [2, 4]
    assert rejected.column("x").to_pylist() == [1, None, 5]
    assert rejected.column(REASON).to_pylist() == ["even_filter:odd", "even_filter:null", "even_filter:odd"]
    assert op.metrics.reasons == {"even_filter:odd": 2, "even_filter:null": 1}
    check_operator_contract(EvenFilter(), batch, id_column="x")


def test_a_filter_without_a_rejected_output_does_not_copy_its_dropped_rows():
    """With no ``rejected:`` output, ``_apply`` builds the rejected batch from the reasons alone: the dropped
    rows' columns (a long text, here) are not copied only to be trimmed off by ``process``. Seen red with the
    dropped rows copied (the rejected batch of ``_apply`` held ``x`` and ``text``)."""
    from mdf import BatchContext

    batch = pa.RecordBatch.from_pydict({"x": [1, 2, None, 4, 5], "text": ["a" * 1000] * 5})
    op = EvenFilter()
    op.keep_rejected = False
    kept, rejected = op._apply(batch, BatchContext("s", 0, 0))
    assert kept.column("x").to_pylist() == [2, 4]
    assert rejected.schema.names == [REASON]
    assert rejected.column(REASON).to_pylist() == ["even_filter:odd", "even_filter:null", "even_filter:odd"]
    kept, rejected = op.process(batch, BatchContext("s", 0, 1), keep_rejected=False)
    assert rejected.schema.names == [REASON] and op.metrics.reasons == {"even_filter:odd": 2, "even_filter:null": 1}


def test_filter_keeping_everything_returns_no_rejected_batch():
    kept, rejected = run_operator(EvenFilter(), pa.RecordBatch.from_pydict({"x": [2, 4]}))
    assert kept.num_rows == 2 and rejected is None


def test_filter_on_empty_batch():
    kept, rejected = run_operator(EvenFilter(), pa.RecordBatch.from_pydict({"x": pa.array([], pa.int64())}))
    assert kept.num_rows == 0 and rejected is None


def test_filter_with_wrong_mask_length_is_an_operator_error():
    with pytest.raises(OperatorError, match="mask of 1 rows for a batch of 3"):
        run_operator(BadMaskFilter(), pa.RecordBatch.from_pydict({"x": [1, 2, 3]}))


def test_refiner_rejects_rows_through_reason_column():
    batch = pa.RecordBatch.from_pydict({"s": ["1", "x", "30"]})
    kept, rejected = run_operator(ParseRefiner(), batch)
    assert kept.column("n").to_pylist() == [1, 30]
    assert REASON not in kept.schema.names
    assert rejected.column(REASON).to_pylist() == ["parse_refiner:not_a_number"]
    check_operator_contract(ParseRefiner(), batch, id_column="s")


def test_deduplicator_keeps_first_row_per_key_across_batches():
    op = ModKeyDedup()
    kept1, rej1 = run_operator(op, pa.RecordBatch.from_pydict({"x": [0, 1, 3, 4]}))
    kept2, rej2 = run_operator(op, pa.RecordBatch.from_pydict({"x": [2, 5, 6]}))
    assert kept1.column("x").to_pylist() == [0, 1]
    assert rej1.column(REASON).to_pylist() == ["mod_key_dedup:duplicate"] * 2
    assert kept2.column("x").to_pylist() == [2]
    assert rej2.column("x").to_pylist() == [5, 6]


def test_operator_params_are_validated_at_construction():
    class Limits(Filter):
        """Keep x <= limit."""

        name = "limits"

        class Params(Params):
            limit: int

        def keep(self, batch):
            return pc.less_equal(batch.column("x"), self.params.limit)

    assert Limits(limit=3).params.limit == 3
    with pytest.raises(Exception, match="limit"):
        Limits(limit="many")
    with pytest.raises(Exception, match="extra"):
        Limits(limit=1, typo=2)


def test_missing_optional_dependency_names_the_pip_install():
    class NeedsModel(Filter):
        """Needs a package that is not installed."""

        name = "needs_model"
        requires = {"surely_not_installed_pkg": "surely-not-installed-pkg>=1"}

        def keep(self, batch):
            raise AssertionError

    with pytest.raises(ImportError, match="pip install 'surely-not-installed-pkg>=1'"):
        NeedsModel()


def test_split_rejected_without_reason_column_is_a_no_op():
    batch = pa.RecordBatch.from_pydict({"a": [1]})
    kept, rejected = split_rejected(batch)
    assert kept is batch and rejected is None


def test_delay_refiner_holds_after_the_rows_until_released(tmp_path) -> None:
    """The hold the killed-mid-run tests stop a run with: two replicas (two instances) share the count in the
    folder; once 300 rows passed, a batch waits for ``release`` and goes on when it appears. (With the count kept
    per instance, the first instance's next batch went on past the hold: seen.)"""
    import threading

    from mdf.ops.debug import DelayRefiner

    params = {"hold_dir": str(tmp_path / "hold"), "hold_after_rows": 300, "hold_max_s": 30}
    first, second = DelayRefiner(**params), DelayRefiner(**params)
    batch = pa.record_batch({"x": pa.array(range(200))})
    assert first.refine(batch).equals(batch) and second.refine(batch).equals(batch)  # 400 rows: both passed
    done = threading.Event()
    waiting = threading.Thread(target=lambda: (first.refine(batch), done.set()))
    waiting.start()
    assert not done.wait(0.5), "a batch went on past the hold"
    (tmp_path / "hold" / "release").touch()
    assert done.wait(10), "the release did not let the batch go on"
    waiting.join()
