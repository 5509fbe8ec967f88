"""On Ray as inline: ``tokenize`` into Megatron shards and a mix of Megatron sources give the same files, byte for
byte (the mix's budget is planned from the ``.idx`` files before any work, so it means the same on both)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_mix import make_source, mix_recipe
from test_tokenize import TEXTS, small_tokenizer  # noqa: F401 - a fixture
from token_helpers import write_parquet

pytest.importorskip("ray")
pytestmark = pytest.mark.usefixtures("local_ray")


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix in (".bin", ".idx")}


@pytest.mark.parametrize(
    "executor", [{"type": "ray"}, {"type": "ray", "whole_shards": False}], ids=["shards", "chains"]
)
def test_a_mix_on_ray_writes_the_inline_files(run_recipe, tmp_path: Path, executor: dict):
    root = tmp_path / "src"
    make_source(root / "web", 0, 1500, 3, seed=1)
    make_source(root / "code", 1, 500, 2, seed=2, mean=900)
    make_source(root / "books", 2, 60, 1, seed=3, mean=250)
    runs = {}
    for name, ex in (("inline", {"type": "inline"}), ("ray", executor)):
        recipe = mix_recipe(root, tmp_path / name, max_tokens=400_000)
        recipe["executor"] = {**ex, "batch_rows": 100}
        _, _, metrics = run_recipe(recipe)
        runs[name] = (_files(tmp_path / name), metrics.stages[0].operators[0].counters)
    assert runs["ray"][0] == runs["inline"][0] and len(runs["inline"][0]) == 8
    assert runs["ray"][1] == runs["inline"][1]


def test_tokenize_on_ray_writes_the_inline_files(run_recipe, tmp_path: Path, small_tokenizer: Path):  # noqa: F811
    src = write_parquet(tmp_path / "in" / "a.parquet", [t for t in TEXTS if t] * 40)
    write_parquet(tmp_path / "in" / "b.parquet", [t for t in TEXTS if t][::-1] * 30)
    for name in ("inline", "ray"):
        run_recipe(
            {
                "reader": {"type": "parquet", "paths": [str(src.parent)]},
                "stages": [
                    {"name": "t", "operators": [{"tokenize": {"tokenizer": str(small_tokenizer), "add_eos": 0}}]}
                ],
                "writer": {"type": "megatron", "path": str(tmp_path / name)},
                "rejected": {"type": "parquet", "path": str(tmp_path / f"{name}-rejected")},
                "executor": {"type": name, "batch_rows": 25},
            }
        )
    assert _files(tmp_path / "ray") == _files(tmp_path / "inline") and len(_files(tmp_path / "inline")) == 4
