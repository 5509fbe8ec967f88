"""The kernel's ids equal Hugging Face ``tokenizers``' own ``encode_batch`` on the real texts of ``../shared/data``.

Four tokenizers trained here with the ``tokenizers`` library: GPT-2's byte-level BPE, a BPE behind Llama 3's
pre-tokenizer regex with ``ignore_merges`` (the kernel runs regexes through fancy-regex, the Python wheel through
Oniguruma: this is where they could part), both encoded by the kernel's own byte-level path (``tokens_fast.rs``),
and, through the crate's ``encode``, BERT's WordPiece with its ``[CLS] ... [SEP]`` template and a SentencePiece-style
Unigram. Every
text (article bodies and each of their paragraphs, evaluation snippets, Readability's expected articles, their lines
and metadata, and every raw page as crawled: 17,610 texts, all 6,025 non-ASCII ones of the set among them) is
compared id for id, each up to its first 5,000 characters (8.0 M characters in all; every text whole, 131 M
characters, is compared by ``benchmarks/bench_tokenize.py --check-ids``: too slow for a test), with the
post-processor's special tokens and, for WordPiece, whose template adds some, also without.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

mdf_kernels = pytest.importorskip("mdf_kernels")
tokenizers = pytest.importorskip("tokenizers", reason="the reference ids come from tokenizers (mdf-tokens[test])")

CHUNK = 500
CAP = 5_000
FAST = ("bytelevel_bpe", "llama3_regex_bpe")


def test_the_set_is_big_and_multilingual(texts: list[str]):
    non_ascii = [t for t in texts if not t.isascii()]
    assert len(texts) >= 10_000, len(texts)
    assert len(non_ascii) >= 3_000, len(non_ascii)
    scripts = {"Cyrillic": "\u0400", "CJK": "\u4e00", "Arabic": "\u0600", "Greek": "\u0370"}
    for name, start in scripts.items():
        assert any(any(ord(start) <= ord(c) < ord(start) + 0x100 for c in t) for t in non_ascii[:5000]), name


@pytest.mark.parametrize(
    "name, special",
    [("bytelevel_bpe", True), ("llama3_regex_bpe", True), ("wordpiece", True), ("wordpiece", False), ("unigram", True)],
)
def test_ids_equal_encode_batch_on_every_real_text(name: str, special: bool, texts: list[str], tokenizers_dir):
    path: Path = tokenizers_dir[name]
    ref = tokenizers.Tokenizer.from_file(str(path))
    ours = mdf_kernels.TextTokenizer(str(path))
    assert ours.fast == (name in FAST)  # the byte-level BPEs take the kernel's own path, the others the crate's
    mismatched = []
    for at in range(0, len(texts), CHUNK):
        chunk = [t[:CAP] for t in texts[at : at + CHUNK]]
        expected = ref.encode_batch(chunk, add_special_tokens=special)
        got, counts, stats = ours.encode(pa.array(chunk), add_special_tokens=special)
        # a text encode_batch gives no id (BERT's normalizer drops all of it) is one the kernel counts as empty
        assert stats["null"] == 0 and stats["empty"] == sum(not e.ids for e in expected)
        offsets = got.offsets.to_numpy()
        values = got.values.to_numpy()
        for i, enc in enumerate(expected):
            if not np.array_equal(values[offsets[i] : offsets[i + 1]], np.asarray(enc.ids, np.uint32)):
                mismatched.append(at + i)
        assert counts.to_pylist() == [len(e.ids) for e in expected] or mismatched
    assert not mismatched, f"{len(mismatched)} of {len(texts)} texts differ, e.g. {texts[mismatched[0]][:200]!r}"


def test_bos_eos_frame_what_encode_batch_gives(texts: list[str], tokenizers_dir):
    path = tokenizers_dir["bytelevel_bpe"]
    ref = tokenizers.Tokenizer.from_file(str(path))
    ours = mdf_kernels.TextTokenizer(str(path))
    eot = ours.token_to_id("<|endoftext|>")
    chunk = [t for t in texts if not t.isascii()][:300]
    got, _, _ = ours.encode(pa.array(chunk), bos=eot, eos=eot)
    for row, enc in zip(got.to_pylist(), ref.encode_batch(chunk), strict=True):
        assert row == [eot, *enc.ids, eot]


def test_vocabulary_past_uint16_gives_ids_past_65535(tmp_path: Path, tokenizers_dir):
    """A tokenizer with 66,000 added tokens (Llama 3 adds 256 reserved ones; big vocabularies pass 65,536): the
    added tokens are matched in the text as encode_batch matches them, and their ids need int32."""
    tok = tokenizers.Tokenizer.from_file(str(tokenizers_dir["bytelevel_bpe"]))
    tok.add_special_tokens([f"<|reserved_{i}|>" for i in range(66_000)])
    path = tmp_path / "big.json"
    tok.save(str(path))
    ours = mdf_kernels.TextTokenizer(str(path))
    assert ours.id_bound > 65_536
    text = ["Hallo <|reserved_65999|> welt <|reserved_3|>!"]
    got, _, _ = ours.encode(pa.array(text))
    assert got.to_pylist()[0] == tok.encode_batch(text)[0].ids
    assert max(got.to_pylist()[0]) > 65_535
