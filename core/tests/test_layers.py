"""Core's modules form a graph without cycles, and the command line starts light.

The import graph is read from the source (:func:`mdf.testing.import_graph`): every import of an ``mdf`` module,
at module level, inside a function or under ``if TYPE_CHECKING:`` (a lazy or type-only import that hides a cycle
is still a cycle), plus what ``mdf/__init__.py`` resolves on first use (its ``_EXPORTS``) and the
``"module:Class"`` references registries import later. The plugins' graphs are checked in
``tests/test_import_cycles.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mdf
from mdf.testing import cycles, import_graph

SRC = Path(mdf.__file__).resolve().parent


def test_core_imports_form_no_cycle():
    """Seen red on eefbc81 once type-only imports count: mdf.executor.api -> mdf.executor.plan -> mdf.plugins ->
    mdf.executor.api, and the inline executor with its pass, and Ray's executor with its metrics and shards."""
    graph = import_graph(SRC.parent, "mdf")
    assert {"mdf.plugins", "mdf.recipe", "mdf.executor.inline", "mdf.executor.ray.executor"} <= set(graph)
    assert "mdf.plugins" in graph["mdf.resolve"] and "mdf.executor.api" in graph["mdf.plugins"]  # real edges
    assert "mdf.plan" in graph["mdf.executor.api"]  # a type-only edge counts
    assert set(mdf._EXPORTS.values()) <= graph["mdf"]  # the lazy export table counts
    assert "mdf.executor.ray.executor" in graph["mdf.builtin"]  # so does a registered reference
    assert "mdf.plugins" not in graph["mdf.recipe"]  # the schema resolves no names (mdf.resolve does)
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"c"}}) == [["a", "b"]]


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
