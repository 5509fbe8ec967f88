"""A third-party model scorer needs no hook of its own: it is a :class:`mdf.Refiner` that declares
``cost_class = "model"`` (batches are sized for a model), loads its model once per worker process in ``setup``,
scores in micro-batches, and registers through ``mdf_register_operators`` like any operator. Installed here the
way users install plugins (an entry point of group ``mdf``), then scored and cut by ``score_filter``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from mdf.testing import read_output

PLUGIN = '''
import json
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import mdf

_MODELS = {}  # path -> model: one per worker process, shared by its threads' operator instances


class EduScorer(mdf.Refiner):
    """Score texts 0..1 with a word-weight model (the shape of a transformers FineWeb-Edu scorer)."""

    name = "edu_scorer"
    cost_class = "model"
    reads = {"column": "string"}
    writes = {"output": "float"}

    class Params(mdf.Params):
        weights: str
        column: str = "text"
        output: str = "edu_score"
        batch_size: int = 64  # rows per model call, as a GPU scorer micro-batches

    def setup(self):
        if self.params.weights not in _MODELS:
            vocab = json.load(open(self.params.weights))
            _MODELS[self.params.weights] = (pa.array(list(vocab)), np.array([*vocab.values(), 0.0]))
        self.vocab, self.weight = _MODELS[self.params.weights]

    def refine(self, batch):
        text, parts = batch.column(self.params.column), []
        for start in range(0, len(text), self.params.batch_size):
            words = pc.utf8_split_whitespace(text.slice(start, self.params.batch_size))
            ids = pc.fill_null(pc.index_in(pc.list_flatten(words), value_set=self.vocab), len(self.vocab))
            sums = np.bincount(pc.list_parent_indices(words), self.weight[ids], minlength=len(words))
            parts.append(sums / np.maximum(pc.fill_null(pc.list_value_length(words), 0), 1))
        return batch.append_column(self.params.output, pa.array(np.concatenate(parts), pa.float32()))


@mdf.hookimpl
def mdf_register_operators(registry):
    registry.add(EduScorer)
'''


def install(site: Path) -> dict[str, str]:
    """The plugin package and its dist-info (entry point ``mdf``) in ``site``; the env that puts it on the path."""
    (site / "mdf_edu").mkdir(parents=True)
    (site / "mdf_edu" / "__init__.py").write_text("")
    (site / "mdf_edu" / "plugin.py").write_text(textwrap.dedent(PLUGIN))
    dist = site / "mdf_edu-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mdf-edu\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[mdf]\nedu = mdf_edu.plugin\n")
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


def mdf(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mdf.cli"]
    full = {**os.environ, "COLUMNS": "200", **env}
    return subprocess.run([*cmd, *args], env=full, capture_output=True, text=True, timeout=300)


def test_a_plugin_model_scorer_is_sized_as_a_model_and_cut_by_score_filter(tmp_path) -> None:
    env = install(tmp_path / "site")
    ops = {op["name"]: op for op in json.loads(mdf("ops", "--json", env=env).stdout)}
    assert ops["edu_scorer"]["cost_class"] == {"value": "model", "declared": True}
    assert ops["edu_scorer"]["distribution"] == "mdf-edu"

    (tmp_path / "weights.json").write_text(json.dumps({"theorem": 1.0, "proof": 1.0, "casino": 0.0}))
    texts = ["theorem proof", "casino casino theorem", "", None, "proof casino", "unknown words only"] * 50
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"id": range(len(texts)), "text": texts}), tmp_path / "in" / "part.parquet")
    recipe = {
        "reader": {"type": "parquet", "paths": [str(tmp_path / "in")]},
        "stages": [
            {
                "name": "score",
                "operators": [
                    {"edu_scorer": {"weights": str(tmp_path / "weights.json"), "batch_size": 7}},
                    {"score_filter": {"column": "edu_score", "min": 0.5}},
                ],
            }
        ],
        "writer": {"type": "parquet", "path": str(tmp_path / "out")},
        "rejected": {"type": "parquet", "path": str(tmp_path / "rejected")},
        "executor": {"type": "inline", "workers": 2},
    }
    (tmp_path / "recipe.yaml").write_text(yaml.safe_dump(recipe))
    plan = json.loads(mdf("plan", str(tmp_path / "recipe.yaml"), "--json", env=env).stdout)
    assert plan["complexity"] == 1.0 + 0.3 + 0.2  # text + the model class + the filter class
    res = mdf("run", "-q", str(tmp_path / "recipe.yaml"), env=env)
    assert res.returncode == 0, res.stderr
    kept, rejected = read_output(tmp_path / "out"), read_output(tmp_path / "rejected")
    assert kept.num_rows + rejected.num_rows == len(texts)
    assert sorted(set(kept.column("text").to_pylist())) == ["proof casino", "theorem proof"]
    assert set(rejected.column("_reason").to_pylist()) == {"score_filter:edu_score"}
