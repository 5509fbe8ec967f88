"""Fixtures and checks for operator authors (a pytest plugin, loaded automatically with mdf-core).

The project's own tests use these, so a third-party operator is held to the same contract:

* ``run_operator(op, batch)`` runs one operator on one batch the way executors do, returning
  ``(kept, rejected)``;
* ``check_operator_contract(op, batch)`` asserts what every executor relies on: every row is either kept or
  rejected with a reason, kept rows keep their order, metrics add up, parameters are documented;
* the ``make_batch`` fixture builds a ``RecordBatch`` from columns, ``run_recipe`` runs a recipe dict inline
  in a temporary folder and returns the kept table, the rejected table and the metrics;
* the module-scoped ``local_ray`` fixture keeps one local Ray up for a test module's in-process Ray runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from mdf.deduplicator import Deduplicator
from mdf.metrics import REASON, RunMetrics
from mdf.operators import BatchContext, Filter, Operator
from mdf.plugins import _HOOKS, Plugins
from mdf.state import KeyState


def run_operator(
    op: Operator, batch: pa.RecordBatch, ctx: BatchContext | None = None
) -> tuple[pa.RecordBatch, pa.RecordBatch | None]:
    """Run ``op`` on ``batch`` as an executor would (setup, key state for deduplicators, context).

    Without ``ctx``, successive calls on one operator are successive batches of one shard (row offsets
    advance), which is what a deduplicator's claimant bookkeeping expects of different batches."""
    if isinstance(op, Deduplicator) and op.state is None:
        op.attach_state(KeyState.local())
    if ctx is None:
        done = getattr(op, "_testing_rows", 0)
        ctx = BatchContext("test-shard", getattr(op, "_testing_batches", 0), done)
        op._testing_rows = done + batch.num_rows  # type: ignore[attr-defined]
        op._testing_batches = ctx.batch_index + 1  # type: ignore[attr-defined]
    return op.process(batch, ctx)


def check_operator_contract(op: Operator, batch: pa.RecordBatch, id_column: str | None = None) -> None:
    """Assert the operator contract on one batch; raises AssertionError naming what broke."""
    assert op.name and op.name.isidentifier() and op.name == op.name.lower(), f"name {op.name!r} is not snake_case"
    assert op.doc(), f"{type(op).__name__} needs a docstring: its first line is what `mdf ops` prints"
    for field_name, f in op.Params.model_fields.items():
        assert f.description, f"parameter {op.name}.{field_name} needs a description (Field(description=...))"
    kept, rejected = run_operator(op, batch)
    n_rej = 0 if rejected is None else rejected.num_rows
    assert kept.num_rows + n_rej == batch.num_rows, f"{op.name}: {kept.num_rows} kept + {n_rej} rejected != input"
    if rejected is not None and rejected.num_rows:
        assert REASON in rejected.schema.names, f"{op.name}: rejected rows carry no '{REASON}' column"
        assert rejected.column(REASON).null_count == 0, f"{op.name}: a rejected row has no reason"
        prefixes = pc.starts_with(rejected.column(REASON), f"{op.name}:")
        assert pc.all(prefixes).as_py(), f"{op.name}: reasons must start with '{op.name}:'"
    assert REASON not in kept.schema.names, f"{op.name}: kept rows still carry '{REASON}'"
    if id_column:
        ids = batch.column(id_column).to_pylist()
        kept_ids = kept.column(id_column).to_pylist()
        positions = [ids.index(i) for i in kept_ids]
        assert positions == sorted(positions), f"{op.name}: kept rows are not in input order"
    m = op.metrics
    assert m.rows_in >= batch.num_rows and m.rows_in == m.rows_out + m.rows_rejected, f"{op.name}: metrics off"
    if isinstance(op, Filter) and kept.num_rows:
        again, _ = run_operator(op, kept)
        assert again.num_rows == kept.num_rows, f"{op.name}: a filter must keep all of its own kept rows"


def register_plugin(plugins: Plugins, plugin: object, name: str) -> None:
    """Register ``plugin`` (an object or module with hookimpls) on a loaded plugin set, running its
    registration hooks as loading from an entry point would. For testing hooks without installing a package."""
    plugins.manager.register(plugin, name=name)
    for hook in _HOOKS:
        for impl in getattr(plugins.manager.hook, hook).get_hookimpls():
            if impl.plugin_name == name:
                impl.function(registry=plugins.registry(hook))


def read_output(path: str | Path) -> pa.Table | None:
    """All part files under ``path`` as one table (shard order), or ``None`` when there are none."""
    files = sorted(p for p in Path(path).glob("*") if p.suffix in (".parquet",) and not p.name.startswith("_"))
    if not files:
        return None
    return pa.concat_tables([pq.read_table(f) for f in files], promote_options="permissive")


@pytest.fixture
def make_batch() -> Callable[..., pa.RecordBatch]:
    """``make_batch(text=[...], url=[...])`` -> RecordBatch (lists are converted by Arrow)."""

    def make(**columns: Any) -> pa.RecordBatch:
        return pa.RecordBatch.from_pydict(columns)

    return make


@pytest.fixture
def run_recipe(tmp_path: Path) -> Callable[..., tuple[pa.Table | None, pa.Table | None, RunMetrics]]:
    """Run a recipe dict inline; ``writer``/``rejected`` default to Parquet folders under ``tmp_path``."""
    from mdf.executor import run_recipe as _run
    from mdf.resolve import parse_recipe

    def run(recipe: dict[str, Any], overrides: list[str] | None = None):
        recipe = dict(recipe)
        recipe.setdefault("writer", {"type": "parquet", "path": str(tmp_path / "out")})
        recipe.setdefault("rejected", {"type": "parquet", "path": str(tmp_path / "rejected")})
        recipe.setdefault("executor", {"type": "inline"})
        metrics = _run(parse_recipe(recipe, overrides))
        return read_output(recipe["writer"]["path"]), read_output(recipe["rejected"]["path"]), metrics

    return run


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray for the module's in-process Ray runs (``pytestmark = pytest.mark.usefixtures("local_ray")``).

    A Ray executor that finds Ray running joins it and leaves it up, so each run costs its actors, not a Ray
    start and stop: ~7 s a run on a 2-core machine (minhash verify test: 15 s -> 8 s a run). Tests of how a run
    starts its own Ray run ``mdf`` in a subprocess instead. Without Ray installed this does nothing: the tests
    that need it say so themselves.

    Ray gets 2 logical CPUs whatever the machine has: the tests' replica and placement figures (``test_unfused_
    stages_get_their_own_actors``: one replica each, "then none left") are written for 2, and on a 16-core CI
    machine Ray would place more."""
    from mdf.executor.placement import fast_connect

    fast_connect()  # as connect() starts a local Ray, before Ray reads its settings
    try:
        import ray
    except ImportError:
        yield
        return
    if ray.is_initialized():
        yield
        return
    # as mdf.executor.placement.connect starts a local Ray: quiet, no dashboard, no prestarted task workers
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
        _system_config={"enable_worker_prestart": False},
    )
    try:
        yield
    finally:
        from mdf.executor.placement import stop_local_ray

        stop_local_ray()
