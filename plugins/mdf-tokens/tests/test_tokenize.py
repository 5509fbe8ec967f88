"""``tokenize`` in recipes: columns, counts, BOS/EOS, long and empty documents, and the validate-time errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from token_helpers import documents_of, run_mdf, write_parquet

pytest.importorskip("mdf_kernels")
tokenizers = pytest.importorskip(
    "tokenizers", reason="the tests train their tokenizers with tokenizers (mdf-tokens[test])"
)

NOT_TOKENIZER = "not a Hugging Face tokenizer.json"
TEXTS = [
    "The quick brown fox jumps over the lazy dog. " * 3,
    "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich.",
    "数据清洗之后是分词。",
    None,
    "",
    "short",
]


@pytest.fixture(scope="module")
def small_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE trained on generated pages (mdf's demo text) and the texts above: no real data needed."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from mdf.demo_data import DemoSpec, make_table

    pages = [t for t in make_table(DemoSpec(rows=400, seed=3)).column("text").to_pylist() if t]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<|endoftext|>", "<s>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )  # fmt: skip
    tok.train_from_iterator(pages + [t for t in TEXTS if t], trainer)
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tok.save(str(path))
    return path


def _ids(path: Path, texts: list[str]) -> list[list[int]]:
    ref = tokenizers.Tokenizer.from_file(str(path))
    return [e.ids for e in ref.encode_batch(texts)]


def test_tokens_and_counts_with_eos(run_recipe, tmp_path: Path, small_tokenizer: Path):
    src = write_parquet(tmp_path / "in" / "a.parquet", TEXTS)
    kept, rejected, metrics = run_recipe(
        {
            "reader": {"type": "parquet", "paths": [str(src)]},
            "stages": [{"name": "tok", "operators": [{"tokenize": {"tokenizer": str(small_tokenizer),
                                                                   "add_eos": "<|endoftext|>"}}]}],
        }
    )  # fmt: skip
    assert rejected is None and kept.num_rows == len(TEXTS)
    eot = tokenizers.Tokenizer.from_file(str(small_tokenizer)).token_to_id("<|endoftext|>")
    want = [
        [*ids, eot] if t else [] for t, ids in zip(TEXTS, _ids(small_tokenizer, [t or "" for t in TEXTS]), strict=True)
    ]
    assert kept.column("tokens").to_pylist() == want
    assert kept.column("n_tokens").to_pylist() == [len(w) for w in want]
    assert kept.schema.field("tokens").type == pa.list_(pa.uint32())
    assert kept.schema.field("tokens").metadata == {b"mdf.token_dtype": b"uint16"}
    counters = metrics.stages[0].operators[0].counters
    assert counters["tokens"] == sum(len(w) for w in want)
    assert (counters["null_texts"], counters["empty_texts"], counters["documents"]) == (1, 1, len(TEXTS))
    assert counters["doc_tokens/<=0"] == 2
    assert sum(v for k, v in counters.items() if k.startswith("doc_tokens/")) == len(TEXTS)


@pytest.mark.parametrize("mode", ["truncate", "split"])
def test_long_documents_are_cut_or_split_and_counted_never_dropped(run_recipe, tmp_path: Path, small_tokenizer, mode):
    """Seen red with the split pieces written as one Megatron sequence (the writer ignored sequence_lengths)."""
    src = write_parquet(tmp_path / "in" / "a.parquet", TEXTS)
    op = {"tokenize": {"tokenizer": str(small_tokenizer), "add_bos": "<s>", "add_eos": 0, "max_tokens": 8,
                       "long_documents": mode}}  # fmt: skip
    out = tmp_path / "mega"
    _, _, metrics = run_recipe(
        {
            "reader": {"type": "parquet", "paths": [str(src)]},
            "stages": [{"name": "tok", "operators": [op]}],
            "writer": {"type": "megatron", "path": str(out)},
        }
    )
    bos = tokenizers.Tokenizer.from_file(str(small_tokenizer)).token_to_id("<s>")
    content = _ids(small_tokenizer, [t or "" for t in TEXTS])
    docs = documents_of(out / "a")
    counters = metrics.stages[0].operators[0].counters
    assert len(docs) == len(TEXTS)  # every row is a document, the empty ones with no token
    for text, ids, doc in zip(TEXTS, content, docs, strict=True):
        if not text:
            assert doc == []
        elif mode == "truncate":
            assert doc == [bos, *ids[:6], 0]
        else:
            pieces = [ids[k : k + 6] for k in range(0, len(ids), 6)]
            assert doc == [t for p in pieces for t in (bos, *p, 0)]
    long = [ids for t, ids in zip(TEXTS, content, strict=True) if t and len(ids) > 6]
    assert long, "the test needs documents longer than max_tokens"
    if mode == "truncate":
        assert counters["truncated"] == len(long)
        assert counters["tokens_cut"] == sum(len(ids) - 6 for ids in long)
    else:
        from token_helpers import read_megatron

        seqs, _ = read_megatron(out / "a")
        assert max(len(s) for s in seqs) <= 8  # every Megatron sequence within max_tokens
        assert counters["split"] == len(long)
        assert counters["pieces"] == sum(-(-len(ids) // 6) for ids in long)


def test_empty_reject_sends_null_and_empty_texts_to_rejected(run_recipe, tmp_path: Path, small_tokenizer):
    src = write_parquet(tmp_path / "in" / "a.parquet", TEXTS)
    kept, rejected, _ = run_recipe(
        {
            "reader": {"type": "parquet", "paths": [str(src)]},
            "stages": [{"name": "tok", "operators": [{"tokenize": {"tokenizer": str(small_tokenizer),
                                                                   "empty": "reject"}}]}],
        }
    )  # fmt: skip
    assert kept.num_rows == 4
    assert sorted(rejected.column("_reason").to_pylist()) == ["tokenize:empty_text", "tokenize:null_text"]


def _recipe(tmp_path: Path, src: Path, **params) -> Path:
    recipe = {
        "reader": {"type": "parquet", "paths": [str(src)]},
        "stages": [{"name": "tok", "operators": [{"tokenize": params}]}],
        "writer": {"type": "megatron", "path": str(tmp_path / "out")},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(json.dumps(recipe))
    return path


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda d: str(d / "missing.json"), "no such file"),
        (lambda d: (d / "bad.json").write_text('{"version": "1.0", "model":') and str(d / "bad.json"), NOT_TOKENIZER),
        (lambda d: (d / "other.json").write_text('{"hello": 1}') and str(d / "other.json"), NOT_TOKENIZER),
        (lambda d: str(d), "is a folder"),
    ],
    ids=["missing", "damaged", "not_a_tokenizer", "folder"],
)  # fmt: skip
def test_a_missing_or_damaged_tokenizer_is_exit_2_at_validate_naming_it(tmp_path: Path, make, needle: str):
    src = write_parquet(tmp_path / "in" / "a.parquet", ["hello"])
    tok = make(tmp_path)
    result = run_mdf("validate", str(_recipe(tmp_path, src, tokenizer=tok)))
    assert result.returncode == 2, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert "stages[0].operators[0]" in line and tok in line and needle in line, line
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "params, needle", [({"add_eos": "</nope>"}, "'</nope>' is not in"), ({"add_bos": 10**6}, "outside")]
)
def test_an_unknown_bos_or_eos_is_exit_2_at_validate(tmp_path: Path, small_tokenizer, params, needle):
    src = write_parquet(tmp_path / "in" / "a.parquet", ["hello"])
    result = run_mdf("validate", str(_recipe(tmp_path, src, tokenizer=str(small_tokenizer), **params)))
    assert result.returncode == 2, result.stderr
    assert needle in result.stderr and "Traceback" not in result.stderr


def test_run_writes_megatron_shards_that_read_back(tmp_path: Path, small_tokenizer):
    """The CLI end to end: Parquet text -> tokenize -> megatron, the shards read with the spec reader."""
    texts = [t for t in TEXTS if t] * 50
    src = write_parquet(tmp_path / "in" / "a.parquet", texts)
    result = run_mdf("run", "-q", str(_recipe(tmp_path, src, tokenizer=str(small_tokenizer))))
    assert result.returncode == 0, result.stderr
    assert documents_of(tmp_path / "out" / "a") == _ids(small_tokenizer, texts)
    meta = json.loads((tmp_path / "out" / "_mdf" / "metrics.json").read_text())
    counters = meta["stages"][0]["operators"][0]["counters"]
    assert counters["tokens"] == sum(map(len, _ids(small_tokenizer, texts)))
    assert pq.read_table(src).num_rows == counters["documents"]
    assert np.fromfile(tmp_path / "out" / "a.bin", np.uint16).size == counters["tokens"]


def test_resume_refuses_a_tokenizer_that_changed_since_the_run_began(tmp_path: Path, small_tokenizer):
    """``tokenizer:`` is an ``mdf.InputFile``, so ``run.json`` keeps what the file held when the run began and
    ``--resume`` with another tokenizer.json under the same path is exit 2 naming the key and the file (one output
    of two vocabularies otherwise). Seen red with ``tokenizer: str``: the resume ran, exit 0, nothing on stderr."""
    import shutil

    src = write_parquet(tmp_path / "in" / "a.parquet", [t for t in TEXTS if t] * 5)
    tok = tmp_path / "tokenizer.json"
    shutil.copy(small_tokenizer, tok)
    recipe = _recipe(tmp_path, src, tokenizer=str(tok))
    assert run_mdf("run", "-q", str(recipe)).returncode == 0
    other = json.loads(tok.read_text())
    other["model"]["vocab"] = {k: (v + 1) % len(other["model"]["vocab"]) for k, v in other["model"]["vocab"].items()}
    tok.write_text(json.dumps(other))
    again = run_mdf("run", "-q", "--resume", str(recipe))
    line = again.stderr.strip().splitlines()[-1]
    assert again.returncode == 2 and "stages[0].operators[0].tokenizer" in line and str(tok) in line, again.stderr
