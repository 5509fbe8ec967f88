from __future__ import annotations

import sys
import textwrap

import pytest

from mdf import Filter, PluginError, RecipeError
from mdf.io.base import Reader
from mdf.operators import Operator
from mdf.plugins import load_plugins
from mdf.registry import Owner, Registry


class A(Filter):
    """A."""

    name = "alpha_filter"

    def keep(self, batch):
        raise AssertionError


class A2(Filter):
    """Another class, same name."""

    name = "alpha_filter"

    def keep(self, batch):
        raise AssertionError


def test_registry_records_owner_and_refuses_duplicates():
    reg = Registry("operator", Operator)
    reg.current_owner = Owner("first", "first-dist", "1.0")
    reg.add(A)
    assert reg.owner("alpha_filter").distribution == "first-dist"
    reg.current_owner = Owner("second", "second-dist", "2.0")
    with pytest.raises(PluginError, match="already registered by plugin 'first'"):
        reg.add(A2)


def test_registry_refuses_classes_of_the_wrong_kind():
    reg = Registry("reader", Reader)
    with pytest.raises(PluginError, match=r"does not subclass mdf\.io\.base\.Reader"):
        reg.add(A)


def test_unknown_name_suggests_the_closest():
    reg = Registry("operator", Operator)
    reg.add(A)
    with pytest.raises(RecipeError, match="did you mean 'alpha_filter'"):
        reg.get("alpah_filter", "stages[0].operators[0]")


def test_builtins_register_through_the_hooks():
    plugins = load_plugins()
    assert {"parquet", "jsonl"} <= set(plugins.readers.names())
    assert {"parquet", "jsonl"} <= set(plugins.writers.names())
    assert plugins.readers.owner("parquet").plugin == "builtin"


def _fake_distribution(tmp_path, name: str, module_source: str) -> None:
    """Install a plugin the way pip would, as a dist-info with an entry point, on sys.path."""
    dist = tmp_path / f"{name}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[mdf]\n{name} = {name}_mod\n")
    (tmp_path / f"{name}_mod.py").write_text(textwrap.dedent(module_source))


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for mod in [m for m in sys.modules if m.endswith("_mod") and m.startswith(("broken", "good", "clash"))]:
        del sys.modules[mod]


def test_broken_plugin_is_reported_and_others_still_load(plugin_dir):
    _fake_distribution(plugin_dir, "broken", "raise RuntimeError('boom at import')\n")
    _fake_distribution(
        plugin_dir,
        "good",
        """
        import pyarrow.compute as pc
        from mdf import Filter, hookimpl

        class Good(Filter):
            '''Keeps everything.'''
            name = "good_filter"
            def keep(self, batch):
                return pc.is_valid(batch.column(0))

        @hookimpl
        def mdf_register_operators(registry):
            registry.add(Good)
        """,
    )
    plugins = load_plugins()
    infos = {i.name: i for i in plugins.infos}
    assert "boom at import" in infos["broken"].error
    assert infos["good"].error is None and infos["good"].contributed["operators"] == ["good_filter"]
    assert plugins.operators.owner("good_filter").distribution == "good"


def test_plugin_hook_that_breaks_the_contract_is_reported(plugin_dir):
    _fake_distribution(
        plugin_dir,
        "clash",
        """
        from mdf import hookimpl

        @hookimpl
        def mdf_register_operators(registry):
            registry.add(int)
        """,
    )
    infos = {i.name: i for i in load_plugins().infos}
    assert "does not subclass" in infos["clash"].error


def test_disable_plugins_env_blocks_a_plugin(plugin_dir, monkeypatch):
    _fake_distribution(plugin_dir, "broken", "raise RuntimeError('never imported')\n")
    monkeypatch.setenv("MDF_DISABLE_PLUGINS", "broken, other")
    infos = {i.name: i for i in load_plugins().infos}
    assert infos["broken"].disabled and infos["broken"].error is None


def test_an_operator_whose_state_type_nobody_registers_fails_its_plugin():
    """A deduplicator declaring an unregistered state type would fail mid-run; it is reported at load."""
    import numpy as np

    from mdf import Deduplicator, StateType
    from mdf.plugins import PluginInfo, _check_state_types

    class Index(StateType):
        name = "test_index"

    class NearOp(Deduplicator):
        """Test op."""

        name = "test_near_op"
        state_types = (Index,)

        def matches(self, batch, rows):
            return np.full(len(rows), np.uint64(2**64 - 1))

    ops, types = Registry("operator", Deduplicator), Registry("state type", StateType)
    ops.current_owner = Owner("near", "mdf-near", "1.0")
    ops.add(NearOp)
    infos = {"near": PluginInfo("near", "mdf-near", "1.0")}
    _check_state_types(ops, types, infos)
    assert "state type" in infos["near"].error and "test_index" in infos["near"].error
    types.add(Index)
    infos["near"].error = None
    _check_state_types(ops, types, infos)
    assert infos["near"].error is None


def test_a_deduplicator_must_say_how_it_finds_duplicates():
    from mdf import Deduplicator

    with pytest.raises(TypeError, match=r"must override keys\(\) or matches\(\)"):

        class Nothing(Deduplicator):
            name = "nothing"
