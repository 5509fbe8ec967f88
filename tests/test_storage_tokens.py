"""mdf-tokens where the data lives: a ``tokenizer.json`` named by its ``s3://`` URL (fetched once per machine into the
cache, as fastText models are), Megatron shards written to ``s3://`` (staged, published with ``_SUCCESS``, the same
bytes as the local run's), and a mix read from Megatron files on ``s3://`` (ranged reads), against SeaweedFS."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
import pytest
import yaml

from .conftest import run_mdf
from .test_storage_write import env, objects

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]
pytest.importorskip("mdf_tokens")
tokenizers = pytest.importorskip(
    "tokenizers", reason="the test trains its tokenizer with tokenizers (mdf-tokens[test])"
)


def _tokenizer(path: Path, texts: list[str]) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        texts, trainers.BpeTrainer(vocab_size=500, special_tokens=["<|endoftext|>"], show_progress=False,
                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet()),
    )  # fmt: skip
    tok.save(str(path))
    return path


def test_tokenize_with_an_s3_tokenizer_into_s3_megatron_shards(tmp_path: Path, seaweed: SeaweedS3, bucket: str):
    """Same shards as the local run; the tokenizer fetched once into the cache; a missing tokenizer URL is exit 2
    at validate naming it."""
    from mdf.demo_data import DemoSpec, write_dataset

    files = write_dataset(str(tmp_path / "in"), DemoSpec(rows=600, files=2, seed=5))
    texts = [t for f in files for t in pq.read_table(f).column("text").to_pylist() if t]
    tok = _tokenizer(tmp_path / "tokenizer.json", texts[:200])
    seaweed.client().upload_file(str(tok), bucket, "models/tokenizer.json")
    runs = {"local": (str(tok), str(tmp_path / "local")), "remote": (f"s3://{bucket}/models/tokenizer.json", f"s3://{bucket}/out"),
            "missing": (f"s3://{bucket}/models/nothing.json", str(tmp_path / "missing"))}  # fmt: skip
    for name, (tokenizer, out) in runs.items():
        recipe = {
            "reader": {"type": "parquet", "paths": [str(tmp_path / "in")]},
            "stages": [
                {"name": "t", "operators": [{"tokenize": {"tokenizer": tokenizer, "add_eos": "<|endoftext|>"}}]}
            ],
            "writer": {"type": "megatron", "path": out, "max_tokens_per_file": 60_000},
        }
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(recipe))
        result = run_mdf("run", "-q", str(tmp_path / f"{name}.yaml"), env=env(seaweed, tmp_path))
        if name == "missing":
            assert result.returncode == 2 and "nothing.json" in result.stderr, result.stderr[-2000:]
            assert "Traceback" not in result.stderr
            continue
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
    remote = objects(seaweed, bucket, "out")
    local = {p.name: p.read_bytes() for p in (tmp_path / "local").iterdir() if p.is_file()}
    parts = sorted(n for n in local if n.endswith((".bin", ".idx")))
    assert len(parts) > 4  # rotated: several pairs per input part
    assert {n: remote[n] for n in parts} == {n: local[n] for n in parts}
    assert "_SUCCESS" in remote and all(p in remote["_SUCCESS"].decode() for p in parts)
    assert len(list((tmp_path / "cache" / "tokenizers").glob("*-tokenizer.json"))) == 1


def test_a_mix_of_megatron_sources_on_s3_equals_the_local_mix(tmp_path: Path, seaweed: SeaweedS3, bucket: str):
    import numpy as np
    from mdf_tokens.megatron.format import write_index

    client = seaweed.client()
    for s, (docs, mean) in enumerate([(900, 200), (300, 700)]):
        rng = np.random.default_rng(s)
        lengths = rng.integers(1, 2 * mean, docs).astype(np.int32)
        folder = tmp_path / "src" / f"s{s}"
        folder.mkdir(parents=True)
        ids = np.repeat(np.arange(docs, dtype=np.uint16) + 1000 * s, lengths)
        (folder / "p.bin").write_bytes(ids.tobytes())
        with open(folder / "p.idx", "wb") as f:
            write_index(f, np.dtype(np.uint16), lengths, np.arange(docs + 1))
        for name in ("p.bin", "p.idx"):
            client.upload_file(str(folder / name), bucket, f"src/s{s}/{name}")
    for name, root, out in (
        ("local", str(tmp_path / "src"), str(tmp_path / "mix")),
        ("remote", f"s3://{bucket}/src", f"s3://{bucket}/mix"),
    ):
        recipe = {
            "reader": {"type": "megatron", "sources": [{"paths": [f"{root}/s0/*.idx"], "weight": 0.5},
                                                      {"paths": [f"{root}/s1/*.idx"], "weight": 0.5}],
                       "max_tokens": 250_000, "shards": 2, "shuffle_window": 50},
            "stages": [{"name": "s", "operators": ["token_stats"]}],
            "writer": {"type": "megatron", "path": out},
        }  # fmt: skip
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(recipe))
        result = run_mdf("run", "-q", str(tmp_path / f"{name}.yaml"), env=env(seaweed, tmp_path))
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
    remote = objects(seaweed, bucket, "mix")
    local = {p.name: p.read_bytes() for p in (tmp_path / "mix").iterdir() if p.suffix in (".bin", ".idx")}
    assert local and {n: remote[n] for n in local} == local
    ids = np.concatenate([np.frombuffer(v, np.uint16) for k, v in sorted(local.items()) if k.endswith(".bin")])
    assert set(np.unique(ids // 1000).tolist()) == {0, 1}  # both sources in the mix
