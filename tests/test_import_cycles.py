"""Layers that do not loop, across the repository (STYLE 16): no import cycle among the modules of core or of any
plugin (every import counts: type-only, in a function, relative, lazy tables, ``"module:Class"`` references;
:func:`mdf.testing.import_graph`), core imports no plugin, and Ray is known to ``mdf.executor.ray`` alone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mdf.testing import import_cycles, import_graph

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core" / "src"
PACKAGES = sorted(
    [(p.parent, p.name) for p in ROOT.glob("plugins/*/src/*") if (p / "__init__.py").exists()]
    + [(p.parent, p.name) for p in ROOT.glob("examples/*/src/*") if (p / "__init__.py").exists()]
    + [(CORE, "mdf"), (ROOT / "rust" / "python", "mdf_kernels"), (ROOT / "tests" / "serial_executor", "mdf_serial")]
)


def test_every_package_is_walked():
    names = {name for _, name in PACKAGES}
    assert {"mdf", "mdf_text", "mdf_dedup", "mdf_image", "mdf_example", "mdf_kernels", "mdf_serial"} <= names


@pytest.mark.parametrize(("src", "package"), PACKAGES, ids=[name for _, name in PACKAGES])
def test_no_import_cycle(src: Path, package: str):
    """Seen red on eefbc81: mdf (executor.api -> executor.plan -> plugins -> executor.api, type-only; the inline
    executor and its pass; Ray's executor, metrics and shards; storage.mirror and storage.output, now output.mirror
    and output.remote) and mdf_dedup (index.files -> index.objects -> index.manifest -> index.files, at run time)."""
    assert import_cycles(src, package) == []


def test_core_imports_no_plugin():
    """Nothing under core/src imports a plugin or names a plugin module, not even lazily or as a type. Seen red on
    eefbc81: core/src/mdf/cli/index.py imported mdf_dedup.index (now mdf-dedup adds `mdf index` itself)."""
    plugins = {name for _, name in PACKAGES if name not in ("mdf", "mdf_kernels")}
    graph = _all_imports(CORE / "mdf")
    bad = {m: sorted(t for t in targets if t.split(".")[0] in plugins) for m, targets in graph.items()}
    assert {m: t for m, t in bad.items() if t} == {}


def test_ray_lives_in_the_ray_executor():
    """Only mdf.executor.ray.* imports Ray (the testing fixture ``local_ray`` aside, which starts one) or a module
    of the Ray executor; the rest of core reaches it through the executor registry. Seen red on eefbc81:
    state.service (the key state's bucket actors), storage.parts (uploads from Ray's nodes),
    executor.failures (Ray's errors), and actors and placement beside the executor (report.context reached Ray
    through ``sys.modules``, which no import walk sees; the cluster's totals are the executor's now)."""
    allowed = ("mdf.executor.ray", "mdf.testing")
    graph = _all_imports(CORE / "mdf")
    core = import_graph(CORE, "mdf")
    bad = {}
    for module, targets in graph.items():
        if module.startswith(allowed):
            continue
        ray = sorted(t for t in targets if t.split(".")[0] == "ray")
        ours = sorted(t for t in core.get(module, ()) if t.startswith("mdf.executor.ray"))
        if ray or ours:
            bad[module] = ray + ours
    assert bad == {"mdf.builtin": ["mdf.executor.ray.executor"]}  # its registration, by reference


def _all_imports(package_dir: Path) -> dict[str, set[str]]:
    """Module -> every absolute module name it imports (any package)."""
    out = {}
    for path in package_dir.rglob("*.py"):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
        out[name] = found
    return out
