"""Fixtures and checks for operator authors (a pytest plugin, loaded automatically with mdf-core).

The project's own tests use these, so a third-party operator is held to the same contract:

* ``run_operator(op, batch)`` runs one operator on one batch the way executors do, returning
  ``(kept, rejected)``;
* ``check_operator_contract(op, batch)`` asserts what every executor relies on: every row is either kept or
  rejected with a reason, kept rows keep their order, metrics add up, parameters are documented;
* the ``make_batch`` fixture builds a ``RecordBatch`` from columns, ``run_recipe`` runs a recipe dict inline
  in a temporary folder and returns the kept table, the rejected table and the metrics;
* the module-scoped ``local_ray`` fixture keeps one local Ray up for a test module's in-process Ray runs;
* ``import_cycles(src, "my_package")`` lists the import cycles among a package's modules (STYLE 16: layers that
  do not loop), counting every import: at module level, inside a function, under ``if TYPE_CHECKING:``, relative,
  a lazy export table and a ``"package.module:Class"`` reference (``registry.add_lazy``).
"""

from __future__ import annotations

import ast
import logging
import re
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
from mdf.plugin_set import HOOKS, Plugins
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
    for hook in HOOKS:
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
    from mdf.resolve import parse_recipe
    from mdf.run import run_recipe as _run

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
    that need it say so themselves. Still one per module: one per session (16 modules in ``all``; a start with
    its first task took 27-30 s here at load 14) was tried, and the whole-shard tests after test_ray_executor.py
    failed with "6 actor(s) did not start within 60.0s" at load 23, but so did one of them with one Ray per module
    at load 26: the load, most likely; one per session waits for a run on a quiet machine.

    Ray gets 2 logical CPUs whatever the machine has: the tests' replica and placement figures (``test_unfused_
    stages_get_their_own_actors``: one replica each, "then none left") are written for 2, and on a 16-core CI
    machine Ray would place more."""
    from mdf.executor.ray.session import fast_connect

    fast_connect()  # as connect() starts a local Ray, before Ray reads its settings
    try:
        import ray
    except ImportError:
        yield
        return
    if ray.is_initialized():
        yield
        return
    # as mdf.executor.ray.session.connect starts a local Ray: quiet, no dashboard, no prestarted task workers
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
        from mdf.executor.ray.session import stop_local_ray

        stop_local_ray()


_REFERENCE = re.compile(r"^([A-Za-z_][\w.]*)(:[A-Za-z_][\w.]*)?$")


def import_graph(src: str | Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, read from the sources under ``src`` (``src/<package>/...``).

    Every import counts, since a cycle hidden by a lazy or type-only import is still a cycle: module level, in a
    function, under ``if TYPE_CHECKING:``, relative ones, the values of a module-level table of strings naming
    modules of the package (a lazy export table), and ``"package.module:Class"`` strings (references a registry
    imports later). A package's ``__init__`` is a node of its own; ``from a import b`` is an edge to the module
    ``a.b`` when there is one, else to ``a``."""
    root = Path(src)
    modules: dict[str, Path] = {}
    for path in (root / package).rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for target in _imports(ast.parse(path.read_text()), name, path.name == "__init__.py", package):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                deps.add(target)
        graph[name] = deps
    return graph


def _imports(tree: ast.AST, module: str, is_package: bool, package: str) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, up level - 1
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([base] if base else [])])
            found.extend(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _REFERENCE.match(node.value)
            if match and node.value.split(".")[0] == package and (match.group(2) or "." in node.value):
                found.append(match.group(1))
    return found


def import_cycles(src: str | Path, package: str) -> list[list[str]]:
    """The import cycles (strongly connected components of two or more modules) of :func:`import_graph`."""
    return cycles(import_graph(src, package))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found
