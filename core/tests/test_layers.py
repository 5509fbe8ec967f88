"""Core's modules form a graph without cycles, and the command line starts light.

The import graph is read from the source with :mod:`ast`: every ``import``/``from ... import`` of an ``mdf``
module, at module level or inside a function (a lazy import that hides a cycle is still a cycle), plus what
``mdf/__init__.py`` resolves on first use (its ``_EXPORTS``). Imports under ``if TYPE_CHECKING:`` never run and
are left out. A package's ``__init__`` is a node of its own; importing ``a.b`` is an edge to ``a.b`` only.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import mdf

SRC = Path(mdf.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[str]:
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from a import b``: the submodule a.b when there is one, else (a name defined in a) a itself
            found.extend(f"{node.module}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for target in _imports(ast.parse(path.read_text())):
            if not target.startswith("mdf"):
                continue
            while target and target not in modules:  # ``from mdf.x import Name``: the module mdf.x
                target = target.rpartition(".")[0]
            if target and target != name:
                deps.add(target)
        graph[name] = deps
    graph["mdf"] |= set(mdf._EXPORTS.values())
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_core_imports_form_no_cycle():
    graph = import_graph()
    assert {"mdf.plugins", "mdf.recipe", "mdf.executor.inline", "mdf.executor.ray"} <= set(graph)
    assert "mdf.plugins" in graph["mdf.resolve"] and "mdf.executor.api" in graph["mdf.plugins"]  # real edges
    assert "mdf.plugins" not in graph["mdf.recipe"]  # the schema resolves no names (mdf.resolve does)
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _imported_by(*argv: str) -> set[str]:
    code = (
        "import sys\nfrom mdf.cli import cli\n"
        "try:\n    cli.main(args=sys.argv[1:], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return set(out.stderr.split())


def test_mdf_version_imports_nothing_heavy():
    loaded = _imported_by("--version")
    heavy = {"pyarrow", "pyarrow.compute", "numpy", "pydantic", "rich", "ray", "mdf.executor.inline", "yaml"}
    assert not heavy & loaded, f"mdf --version imported {sorted(heavy & loaded)}"


def test_mdf_ops_imports_no_ray():
    loaded = _imported_by("ops", "--json")
    assert not {m for m in loaded if m == "ray" or m.startswith("ray.")}


def test_an_inline_run_imports_no_ray(tmp_path):
    """Importing Ray costs ~1.2 s here; a run on the default executor must not pay it (the report's machine
    context once imported Ray only to ask whether it was initialised). Meaningful where Ray is installed."""
    data = tmp_path / "in.jsonl"
    data.write_text('{"id": 1, "text": "a line of text"}\n{"id": 2, "text": "another"}\n')
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        f"reader: {{type: jsonl, paths: ['{data}']}}\n"
        "stages: [{name: s, operators: [{noop_refiner: {}}]}]\n"
        f"writer: {{type: parquet, path: '{tmp_path / 'out'}'}}\n"
    )
    loaded = _imported_by("run", "-q", str(recipe))
    assert "mdf.executor.inline" in loaded and (tmp_path / "out" / "_mdf" / "metrics.json").exists()
    assert not {m for m in loaded if m == "ray" or m.startswith("ray.")}
