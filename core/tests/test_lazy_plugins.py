"""Operators registered by reference (``registry.add_lazy``): a run imports only what its recipe names, while
``mdf plugins`` and ``mdf ops`` still import and list everything, and show a module that fails to import as its
plugin's error."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib.util import find_spec

import pytest

from mdf import Filter, PluginError, RecipeError
from mdf.commands import CORE_COMMANDS
from mdf.operators import Operator
from mdf.plugins import _load, load_plugins
from mdf.registry import Owner, Registry

MDF = [sys.executable, "-c", "from mdf.cli import main; main()"]

GOOD_OP = '''
import pyarrow.compute as pc
from mdf import Filter

class Lazy(Filter):
    """Keeps every row."""
    name = "lazy_filter"
    def keep(self, batch):
        return pc.is_valid(batch.column(0))
'''

PLUGIN = """
from mdf import hookimpl

@hookimpl
def mdf_register_operators(registry):
    registry.add_lazy("lazy_filter", "lazyplug_ops:Lazy")
    registry.add_lazy("broken_filter", "lazyplug_broken:Broken")

@hookimpl
def mdf_register_commands(registry):
    registry.add_lazy("lazy-hello", "lazyplug_cli:command")
    registry.add_lazy("broken-cmd", "lazyplug_broken:command")
"""

GOOD_CLI = '''
import click

@click.command("lazy-hello")
def command():
    """Print hello (a plugin's command registered by reference)."""
    click.echo("hello from lazyplug")
'''


@pytest.fixture
def lazy_plugin(tmp_path, monkeypatch):
    """A plugin installed the way pip would (dist-info with an entry point) whose second operator module raises
    at import."""
    dist = tmp_path / "lazyplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lazyplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[mdf]\nlazyplug = lazyplug_mod\n")
    (tmp_path / "lazyplug_mod.py").write_text(textwrap.dedent(PLUGIN))
    (tmp_path / "lazyplug_ops.py").write_text(textwrap.dedent(GOOD_OP))
    (tmp_path / "lazyplug_cli.py").write_text(textwrap.dedent(GOOD_CLI))
    (tmp_path / "lazyplug_broken.py").write_text("raise RuntimeError('boom in the operator module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    _load.cache_clear()
    yield tmp_path
    _load.cache_clear()
    for mod in [m for m in sys.modules if m.startswith("lazyplug")]:
        del sys.modules[mod]


def test_loading_imports_no_operator_module_until_asked(lazy_plugin):
    plugins = load_plugins()
    assert {"lazy_filter", "broken_filter"} <= set(plugins.operators.names())
    assert "lazyplug_ops" not in sys.modules and "lazyplug_broken" not in sys.modules
    info = next(i for i in plugins.infos if i.name == "lazyplug")
    assert info.error is None and info.contributed["operators"] == ["broken_filter", "lazy_filter"]
    assert plugins.operators.get("lazy_filter").__module__ == "lazyplug_ops"
    assert "lazyplug_broken" not in sys.modules


def test_an_operator_module_that_fails_fails_only_its_lookup(lazy_plugin):
    """Fails when the import error escapes raw instead of as the look-up's error naming the plugin: seen."""
    plugins = load_plugins()
    with pytest.raises(RecipeError, match=r"plugin 'lazyplug' \(lazyplug\): operator 'broken_filter'.*boom"):
        plugins.operators.get("broken_filter", "stages[0].operators[0]")
    assert plugins.operators.get("lazy_filter").name == "lazy_filter"


def test_mdf_plugins_lists_a_lazy_module_that_fails_with_its_error(lazy_plugin):
    """Fails without ``resolve_all`` in ``mdf plugins``: seen (the plugin was listed with no error)."""
    out = subprocess.run([*MDF, "plugins", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    infos = {i["name"]: i for i in json.loads(out.stdout)}
    assert "boom in the operator module" in infos["lazyplug"]["error"]
    installed = [n for n, module in (("text", "mdf_text"), ("dedup", "mdf_dedup")) if find_spec(module)]
    assert all(infos[n]["error"] is None for n in installed)  # the core session has neither plugin
    ops = subprocess.run([*MDF, "ops", "--json"], capture_output=True, text=True)
    names = {d["name"] for d in json.loads(ops.stdout)}
    assert "lazy_filter" in names and "broken_filter" not in names
    assert ("exact_dedup" in names) == ("dedup" in installed)


def test_a_plugin_command_is_imported_when_asked_and_a_broken_one_fails_alone(lazy_plugin):
    """``mdf --help`` lists a plugin's commands after mdf's own, a broken one with its error; the broken one fails
    in one line (exit 1) naming the plugin, while ``mdf``, the other command and ``mdf plugins`` go on working.
    Seen red with ``get_command`` asking the registry's ``get`` (the import error escapes): ``mdf --help`` itself
    exited 2 with the error line."""
    plugins = load_plugins()
    assert {"broken-cmd", "lazy-hello"} <= set(plugins.commands.names())  # (and index where mdf-dedup is)
    assert "lazyplug_cli" not in sys.modules  # loading the plugin imported no command module
    helped = subprocess.run([*MDF, "--help"], capture_output=True, text=True)
    assert helped.returncode == 0, helped.stderr
    lines = helped.stdout.splitlines()
    listed_names = [ln.split()[0] for ln in lines[lines.index("Commands:") + 1 :] if ln.startswith("  ")]
    assert listed_names == [*CORE_COMMANDS, *plugins.commands.names()]
    assert "broken-cmd  (failed to load; `mdf broken-cmd` says why)" in helped.stdout
    ran = subprocess.run([*MDF, "lazy-hello"], capture_output=True, text=True)
    assert (ran.returncode, ran.stdout) == (0, "hello from lazyplug\n"), ran.stderr
    broken = subprocess.run([*MDF, "broken-cmd", "--flag", "x"], capture_output=True, text=True)
    assert broken.returncode == 1 and "Traceback" not in broken.stderr
    assert broken.stderr.startswith("error: plugin 'lazyplug' (lazyplug): command 'broken-cmd'")
    assert "boom in the operator module" in broken.stderr and len(broken.stderr.splitlines()) == 1
    listed = subprocess.run([*MDF, "plugins", "--json"], capture_output=True, text=True)
    info = {i["name"]: i for i in json.loads(listed.stdout)}["lazyplug"]
    assert info["contributed"]["commands"] == ["broken-cmd", "lazy-hello"] and "boom" in info["error"]


def test_an_unknown_command_names_a_plugin_that_failed_to_load(tmp_path, monkeypatch):
    """``mdf index`` where the plugin that would add it fails to import: the usage error says a plugin failed to
    load (click's bare "No such command" before)."""
    dist = tmp_path / "deadplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: deadplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[mdf]\ndeadplug = deadplug_mod\n")
    (tmp_path / "deadplug_mod.py").write_text("raise ImportError('deadplug needs a missing library')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    out = subprocess.run([*MDF, "no-such-command"], capture_output=True, text=True)
    assert out.returncode == 2 and "plugin 'deadplug' (deadplug) failed to load" in out.stderr, out.stderr


class Other(Filter):
    """Named differently from what it is registered as."""

    name = "other_filter"

    def keep(self, batch):
        raise AssertionError


def test_a_reference_must_name_a_class_of_the_kind_and_name(monkeypatch):
    reg = Registry("operator", Operator)
    reg.current_owner = Owner("p", "p-dist", "1")
    reg.add_lazy("wrong_name", f"{__name__}:Other")
    reg.add_lazy("not_an_op", "pathlib:Path")
    with pytest.raises(RecipeError, match="named 'other_filter', registered as 'wrong_name'"):
        reg.get("wrong_name")
    with pytest.raises(RecipeError, match="does not subclass"):
        reg.get("not_an_op")
    assert reg.resolve_all().keys() == {"wrong_name", "not_an_op"}
    with pytest.raises(PluginError, match=r"'package.module:Class'"):
        reg.add_lazy("bad", "no_colon")
    reg.add(Other)
    with pytest.raises(PluginError, match="already registered"):
        reg.add_lazy("other_filter", "somewhere:Else")


def test_a_lazy_deduplicator_is_checked_for_its_state_types_when_imported():
    """The load-time check (state types registered) also runs on a class imported later: fails without the
    registry's ``check`` callback: seen (the unregistered state type passed)."""
    pytest.importorskip("mdf_dedup", reason="needs mdf-dedup (the all session has it; the core session does not)")
    plugins = load_plugins()
    ops = plugins.operators
    assert ops.get("minhash_dedup").state_types  # the real plugin, registered by reference, checks out
    ops.current_owner = Owner("near", "mdf-near", "1.0")
    ops.add_lazy("test_near_op", "mdf_lazy_near_fixture:NearOp")
    sys.modules["mdf_lazy_near_fixture"] = _near_module()
    try:
        with pytest.raises(RecipeError, match=r"state type .* which no plugin registers"):
            ops.get("test_near_op")
    finally:
        del sys.modules["mdf_lazy_near_fixture"]
        _load.cache_clear()


def _near_module():
    import types

    import numpy as np

    from mdf import Deduplicator, StateType

    class Index(StateType):
        name = "test_lazy_index"

    class NearOp(Deduplicator):
        """Test op."""

        name = "test_near_op"
        state_types = (Index,)

        def matches(self, batch, rows):
            return np.full(len(rows), np.uint64(2**64 - 1))

    mod = types.ModuleType("mdf_lazy_near_fixture")
    mod.NearOp = NearOp
    return mod
