"""Every hook in mdf.hookspecs has a test here (checked by the last test, datasette style)."""

from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass

import click
import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner

from mdf import (
    CostClass,
    Filter,
    KeyState,
    Modality,
    PluginError,
    RecipeError,
    StateType,
    Writer,
    hookimpl,
    hookspecs,
)
from mdf.batching import declared_modality, operator_costs
from mdf.cli import cli
from mdf.executor.inline import InlineExecutor, InlineParams
from mdf.executor.inline_metrics import InlineMetrics
from mdf.io.parquet import ParquetReader
from mdf.plugins import load_plugins
from mdf.resolve import parse_recipe
from mdf.run import run_recipe
from mdf.testing import register_plugin


class KeepAll(Filter):
    """Keeps every row."""

    name = "keep_all_filter"

    def keep(self, batch):
        return pa.repeat(pa.scalar(True), batch.num_rows)


class Spectrogram(Modality):
    """Mel spectrograms decoded from compressed audio."""

    name = "spectrogram"
    memory_multiplier = 9.0
    complexity = 5.0
    default_rows = 800
    max_rows = 4_000


class Tokenization(CostClass):
    """A tokenizer run per row."""

    name = "tokenization"
    weight = 0.15


class LoudEnough(KeepAll):
    """Keeps every spectrogram (declares what it reads and costs)."""

    name = "loud_enough_filter"
    modality = "spectrogram"
    cost_class = "tokenization"


class NullWriter(Writer):
    """Discards everything."""

    name = "null_writer"

    def write(self, batch, shard_id):
        pass


class TinyReader(ParquetReader):
    """Parquet under another name."""

    name = "tiny_reader"


class SeenCount(StateType):
    """Counts the keys it was sent (a state type as small as one gets)."""

    name = "seen_count"

    def __init__(self) -> None:
        self.n = 0

    def add(self, keys: np.ndarray) -> int:
        self.n += len(keys)
        return self.n


@dataclass
class LabelledMetrics(InlineMetrics):
    """A plugin executor's own record: its fields go to the top level of metrics.json."""

    label: str = ""


class OneShardAtATime(InlineExecutor):
    """The inline executor with one worker thread, and a label of its own."""

    name = "one_shard_at_a_time"

    class Params(InlineParams):
        label: str = "x"

    def summary(self) -> str:
        return f"label {self.params.label}"

    def run(self, progress=None):
        self.params = self.params.model_copy(update={"workers": 1})
        metrics = super().run(progress)
        metrics.executor_metrics = LabelledMetrics(**asdict(metrics.executor_metrics), label=self.params.label)
        return metrics


@click.command("greet")
@click.argument("who")
def greet(who: str) -> None:
    """Say hello to WHO (a plugin's command)."""
    if who == "nobody":
        raise RecipeError("greet: nobody to greet; name someone")
    click.echo(f"hello {who}")


class Plugin:
    seen: list = []

    @hookimpl
    def mdf_register_commands(self, registry):
        registry.add(greet)

    @hookimpl
    def mdf_register_state_types(self, registry):
        registry.add(SeenCount)

    @hookimpl
    def mdf_register_executors(self, registry):
        registry.add(OneShardAtATime)

    @hookimpl
    def mdf_register_operators(self, registry):
        registry.add(KeepAll)
        registry.add(LoudEnough)

    @hookimpl
    def mdf_register_modalities(self, registry):
        registry.add(Spectrogram)

    @hookimpl
    def mdf_register_cost_classes(self, registry):
        registry.add(Tokenization)

    @hookimpl
    def mdf_register_readers(self, registry):
        registry.add(TinyReader)

    @hookimpl
    def mdf_register_writers(self, registry):
        registry.add(NullWriter)

    @hookimpl
    def mdf_recipe_loaded(self, recipe):
        self.seen.append(recipe)
        if any(s.name == "forbidden" for s in recipe.stages):
            raise RecipeError("stage name 'forbidden' is refused by the test plugin", "stages[0].name")


@pytest.fixture
def plugins():
    p = load_plugins()
    register_plugin(p, Plugin(), "test-plugin")
    yield p
    p.manager.unregister(name="test-plugin")


def _recipe(tmp_path, stage="s"):
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1]}), tmp_path / "in.parquet")
    return {
        "reader": {"type": "tiny_reader", "paths": [str(tmp_path / "in.parquet")]},
        "stages": [{"name": stage, "operators": ["keep_all_filter"]}],
        "writer": {"type": "null_writer"},
    }


def test_mdf_register_operators(plugins):
    assert "keep_all_filter" in plugins.operators


def test_mdf_register_readers(plugins):
    assert plugins.readers.get("tiny_reader") is TinyReader


def test_mdf_register_writers(plugins):
    assert plugins.writers.get("null_writer") is NullWriter


def test_mdf_register_state_types(plugins):
    assert plugins.state_types.get("seen_count") is SeenCount
    state = KeyState.local(2)
    keys = np.arange(5, dtype=np.uint64)  # 0, 2, 4 to bucket 0; 1, 3 to bucket 1
    pieces = state.request(SeenCount, "ns", "add", keys, (keys,))
    assert sorted(n for _, n in pieces) == [2, 3]


def test_mdf_register_modalities(plugins, tmp_path):
    """A plugin's modality is planned for like a built-in one; the heaviest declared wins over the reader's."""
    assert plugins.modalities.get("spectrogram") is Spectrogram
    data = _recipe(tmp_path)
    data["reader"]["modality"] = "image"
    data["stages"][0]["operators"] = ["keep_all_filter", "loud_enough_filter"]
    recipe = parse_recipe(data, plugins=plugins)
    reader = TinyReader(**{k: v for k, v in data["reader"].items() if k != "type"})
    modality, by, note = declared_modality(reader, recipe, plugins)
    assert (modality, by, note) == (Spectrogram, ["loud_enough_filter"], "lighter: image (reader tiny_reader)")


def test_mdf_register_cost_classes(plugins, tmp_path):
    assert plugins.cost_classes.get("tokenization") is Tokenization
    data = _recipe(tmp_path)
    data["stages"][0]["operators"] = ["keep_all_filter", "loud_enough_filter"]
    costs = operator_costs(parse_recipe(data, plugins=plugins), plugins)
    assert [c.weight for c in costs] == [0.2, 0.15]  # a filter by its kind's default; the declared class


def test_mdf_register_executors(plugins, tmp_path):
    """A plugin's executor runs a recipe with its own validated parameters; a bad one names its YAML path."""
    assert plugins.executors.get("one_shard_at_a_time") is OneShardAtATime
    assert {"inline", "ray"} <= set(plugins.executors.names())
    data = _recipe(tmp_path)
    data["writer"] = {"type": "parquet", "path": str(tmp_path / "out")}
    data["executor"] = {"type": "one_shard_at_a_time", "label": "mine"}
    lines: list[str] = []
    metrics = run_recipe(parse_recipe(data, plugins=plugins), plugins=plugins, announce=lines.append)
    assert metrics.executor_metrics.label == "mine" and metrics.rows_written == 1
    assert metrics.to_dict()["label"] == "mine" and metrics.to_dict()["workers"] == 1
    assert lines == [
        "executor: one_shard_at_a_time (label mine), because executor.type is 'one_shard_at_a_time' in the recipe"
    ]
    data["executor"] = {"type": "one_shard_at_a_time", "label": 3}
    with pytest.raises(RecipeError, match=r"executor\.label"):
        parse_recipe(data, plugins=plugins)
    data["executor"] = {"type": "inline", "max_in_flight": 3}  # a Ray key: inline has no such parameter
    with pytest.raises(RecipeError, match=r"executor\.max_in_flight.*unknown key.*workers"):
        parse_recipe(data, plugins=plugins)


def test_mdf_recipe_loaded(plugins, tmp_path):
    Plugin.seen.clear()
    recipe = parse_recipe(_recipe(tmp_path), plugins=plugins)
    assert Plugin.seen == [recipe]
    with pytest.raises(RecipeError, match="refused by the test plugin"):
        parse_recipe(_recipe(tmp_path, stage="forbidden"), plugins=plugins)


def test_mdf_register_commands(plugins):
    """A plugin's command is listed after mdf's own and runs; its MdfError keeps its exit code. A plugin may not
    take one of mdf's own names nor register something that is not a click command."""
    from mdf.commands import CommandRegistry

    runner = CliRunner()
    listed = runner.invoke(cli, ["--help"])
    assert listed.exit_code == 0 and "greet" in listed.output and "Say hello to WHO" in listed.output
    assert listed.output.index(" run ") < listed.output.index(" greet ")
    assert runner.invoke(cli, ["greet", "you"]).output == "hello you\n"
    failed = runner.invoke(cli, ["greet", "nobody"])
    assert isinstance(failed.exception, RecipeError) and failed.exception.exit_code == 2
    registry = CommandRegistry()
    with pytest.raises(PluginError, match="'run', which is one of mdf's own commands"):
        registry.add(click.Command("run"))
    with pytest.raises(PluginError, match=r"not a click\.Command"):
        registry.add(greet.callback)
    with pytest.raises(PluginError, match="lower-case"):
        registry.add_lazy("Greet_Me", "somewhere:command")
    registry.add(greet)
    with pytest.raises(PluginError, match="already registered"):
        registry.add_lazy("greet", "somewhere:command")


def test_every_hook_has_a_test():
    hooks = [n for n, _ in inspect.getmembers(hookspecs, inspect.isfunction) if n.startswith("mdf_")]
    tested = {n.removeprefix("test_") for n in globals() if n.startswith("test_mdf_")}
    assert hooks and set(hooks) <= tested, f"hooks without a test: {set(hooks) - tested}"
