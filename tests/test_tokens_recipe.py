"""The README's "from a CommonCrawl WARC to Megatron shards in one recipe" runs as printed, and
``examples/tokenize.yaml`` runs on the FineWeb-style recipe's output with a tokenizer trained on the demo data
(``mdf_tokens.train``): the shards read back with the spec reader hold one document per kept row, each ending in the
EOS token."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from .conftest import ROOT, run_mdf

pytest.importorskip("mdf_tokens")
pytest.importorskip("mdf_text")
pytest.importorskip("mdf_dedup")
pytest.importorskip("fastwarc", reason="the WARC reader needs FastWARC: mdf-text[web]")
pytest.importorskip("tokenizers", reason="the tokenizer is trained with tokenizers: mdf-tokens[train]")
sys.path.insert(0, str(ROOT / "plugins" / "mdf-tokens" / "tests"))

from token_helpers import documents_of


def readme_recipe() -> dict:
    section = (ROOT / "README.md").read_text().split("### From a CommonCrawl WARC to Megatron shards", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    return yaml.safe_load(block.group(1))


def _train(folder: Path, out: Path) -> None:
    from mdf.demo_data import DemoSpec, write_dataset

    write_dataset(str(folder), DemoSpec(rows=2000, files=2, seed=11))
    subprocess.run([sys.executable, "-m", "mdf_tokens.train", str(folder), "--out", str(out), "--vocab-size", "2000"],
                   check=True, capture_output=True)  # fmt: skip


def _eot(tokenizer: Path) -> int:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(tokenizer)).token_to_id("<|endoftext|>")


def test_the_readme_recipe_turns_a_warc_into_megatron_shards(tmp_path: Path):
    subprocess.run([sys.executable, "-m", "mdf_text.demo_warc", str(tmp_path / "mdf-demo" / "warc"), "--pages", "300"],
                   check=True, capture_output=True)  # fmt: skip
    _train(tmp_path / "train", tmp_path / "mdf-demo" / "tokenizer.json")
    (tmp_path / "recipe.yaml").write_text(yaml.safe_dump(readme_recipe()))
    blocklist = "stages[0].operators[4].blocklist=" + str(ROOT / "examples" / "blocklist.txt")  # cwd is tmp_path
    result = run_mdf("run", "-q", str(tmp_path / "recipe.yaml"), "--set", blocklist, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    shards = sorted((tmp_path / "mdf-demo" / "shards").glob("*.idx"))
    docs = [d for idx in shards for d in documents_of(str(idx)[:-4])]
    metrics = json.loads((tmp_path / "mdf-demo" / "shards" / "_mdf" / "metrics.json").read_text())
    assert len(docs) == metrics["rows_written"] > 20
    eot = _eot(tmp_path / "mdf-demo" / "tokenizer.json")
    assert all(d and d[-1] == eot and len(d) <= 8192 for d in docs)


def test_examples_tokenize_yaml_on_the_fineweb_output(tmp_path: Path):
    from mdf.demo_data import DemoSpec, write_dataset

    write_dataset(str(tmp_path / "mdf-demo" / "data"), DemoSpec(rows=3000, files=2, seed=2))
    fineweb = run_mdf("run", "-q", str(ROOT / "examples" / "fineweb.yaml"), cwd=tmp_path)
    assert fineweb.returncode == 0, fineweb.stderr[-3000:]
    out = tmp_path / "mdf-demo" / "fineweb-out"
    tokenizer = tmp_path / "mdf-demo" / "tokenizer.json"
    train = [sys.executable, "-m", "mdf_tokens.train", str(out), "--out", str(tokenizer), "--vocab-size", "3000"]
    subprocess.run(train, check=True, capture_output=True, cwd=tmp_path)
    result = run_mdf("run", "-q", str(ROOT / "examples" / "tokenize.yaml"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    kept = sum(pq.read_metadata(p).num_rows for p in out.glob("*.parquet"))
    docs = [d for idx in sorted((tmp_path / "mdf-demo" / "tokens").glob("*.idx")) for d in documents_of(str(idx)[:-4])]
    assert len(docs) == kept > 50
    eot = _eot(tmp_path / "mdf-demo" / "tokenizer.json")
    assert all(d[-1] == eot for d in docs)
    assert np.fromfile(next((tmp_path / "mdf-demo" / "tokens").glob("*.bin")), np.uint16).size > 0
