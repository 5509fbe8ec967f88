"""What the tests share: real texts from ``../shared/data``, tokenizers trained on them at test time with Hugging Face's
``tokenizers`` (the reference the kernel's ids are checked against), a reader of Megatron files written from
Megatron-Core's spec (``megatron.core`` needs torch, which PyPI ships only with CUDA), and running a recipe.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT.parent / "shared" / "data"
NEED = "the real texts of ../shared/data"


def shared_or_skip() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"needs {NEED} ({SHARED} is absent)")
    return SHARED


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def real_texts() -> list[str]:
    """Every text of ``../shared/data`` the tests tokenize: article bodies and their paragraphs (AEB), the
    evaluation snippets (trafilatura's corpus), Readability's expected articles, their lines and metadata, and the
    raw pages of all three (HTML as crawled, decoded as UTF-8 with replacement). Ordered, de-duplicated, empty
    ones dropped."""
    data = shared_or_skip()
    texts: list[str] = []
    truth = json.loads((data / "aeb" / "ground-truth.json").read_text())
    for _, item in sorted(truth.items()):
        body = item.get("articleBody") or ""
        texts.append(body)
        texts += [p for p in body.split("\n") if p.strip()]
    for page in sorted((data / "aeb" / "html").glob("*.html.gz")):
        texts.append(_decode(gzip.decompress(page.read_bytes())))
    evaldata = json.loads((data / "trafeval-dev" / "tests" / "evaldata.json").read_text())
    for _, item in sorted(evaldata.items()):
        for key in ("with", "without"):
            texts += [s for s in item.get(key, []) if isinstance(s, str)]
    for folder in ("cache", "eval"):
        for page in sorted((data / "trafeval-dev" / "tests" / folder).glob("*")):
            raw = page.read_bytes()
            texts.append(_decode(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw))
    for page in sorted(p for p in (data / "readability-pages").iterdir() if p.is_dir()):
        for name in ("source.html", "expected.html"):
            if (page / name).exists():
                texts.append(_decode((page / name).read_bytes()))
        if (page / "expected.html").exists():  # and each line of the expected article (a paragraph, mostly)
            texts += [line for line in _decode((page / "expected.html").read_bytes()).split("\n") if line.strip()]
        meta = page / "expected-metadata.json"
        if meta.exists():
            texts += [v for v in json.loads(meta.read_text()).values() if isinstance(v, str)]
    return [t for t in dict.fromkeys(texts) if t]


def train_tokenizers(texts: list[str], folder: Path) -> dict[str, Path]:
    """Train four tokenizers on ``texts`` with the ``tokenizers`` library and save their ``tokenizer.json``:
    GPT-2's byte-level BPE, a BPE behind Llama 3's pre-tokenizer regex (case-insensitive contractions, ``\\p{L}``,
    ``\\p{N}{1,3}``, a lookahead), BERT's WordPiece, and a SentencePiece-style Unigram."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    eot = "<|endoftext|>"

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.post_processor = processors.ByteLevel(trim_offsets=False)
    bpe.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=4000, special_tokens=[eot], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )  # fmt: skip
    out["bytelevel_bpe"] = bpe

    llama = (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
        r"|\s+(?!\S)|\s+"
    )
    split = Tokenizer(models.BPE(ignore_merges=True))  # as Llama 3's file has it: a piece in the vocabulary is one id
    split.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(llama), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    split.decoder = decoders.ByteLevel()
    split.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=8000, special_tokens=["<|begin_of_text|>", eot], show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )  # fmt: skip
    out["llama3_regex_bpe"] = split

    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.decoder = decoders.WordPiece()
    wp.train_from_iterator(
        texts,
        trainers.WordPieceTrainer(
            vocab_size=6000, special_tokens=["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"], show_progress=False
        ),
    )
    wp.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", wp.token_to_id("[CLS]")), ("[SEP]", wp.token_to_id("[SEP]"))]
    )
    out["wordpiece"] = wp

    uni = Tokenizer(models.Unigram())
    uni.normalizer = normalizers.NFKC()
    uni.pre_tokenizer = pre_tokenizers.Metaspace()
    uni.decoder = decoders.Metaspace()
    uni.train_from_iterator(
        texts,
        trainers.UnigramTrainer(
            vocab_size=5000, special_tokens=["<unk>", "<s>", "</s>"], unk_token="<unk>", show_progress=False
        ),
    )
    out["unigram"] = uni

    paths = {}
    for name, tok in out.items():
        path = folder / f"{name}.json"
        tok.save(str(path))
        paths[name] = path
    return paths


def read_megatron(prefix: str | os.PathLike[str]) -> tuple[list[np.ndarray], np.ndarray]:
    """``(sequences, document indices)`` of a Megatron ``.idx``/``.bin`` pair, read as Megatron-Core's
    ``_IndexReader`` and ``IndexedDataset`` read it (written here from its source's layout, separately from
    mdf_tokens.megatron.format, so the writer is checked against the spec and not against itself)."""
    dtypes = {
        1: np.uint8,
        2: np.int8,
        3: np.int16,
        4: np.int32,
        5: np.int64,
        6: np.float64,
        7: np.float32,
        8: np.uint16,
    }
    idx = Path(f"{prefix}.idx").read_bytes()
    assert idx[:9] == b"MMIDIDX\x00\x00", "header"
    (version,) = struct.unpack("<Q", idx[9:17])
    assert version == 1
    (code,) = struct.unpack("<B", idx[17:18])
    (sequence_count,) = struct.unpack("<Q", idx[18:26])
    (document_count,) = struct.unpack("<Q", idx[26:34])
    offset = 34
    lengths = np.frombuffer(idx, np.int32, sequence_count, offset)
    offset += lengths.nbytes
    pointers = np.frombuffer(idx, np.int64, sequence_count, offset)
    offset += pointers.nbytes
    documents = np.frombuffer(idx, np.int64, document_count, offset)
    assert offset + documents.nbytes == len(idx), "trailing bytes"
    dtype = np.dtype(dtypes[code])
    data = np.memmap(f"{prefix}.bin", dtype=dtype, mode="r")
    seqs = [
        np.array(data[p // dtype.itemsize : p // dtype.itemsize + n]) for p, n in zip(pointers, lengths, strict=True)
    ]
    assert data.size == int(lengths.sum()), ".bin holds exactly the sequences"
    return seqs, documents


def documents_of(prefix: str | os.PathLike[str]) -> list[list[int]]:
    """Each document's ids (its sequences joined), read with :func:`read_megatron`."""
    seqs, docs = read_megatron(prefix)
    return [np.concatenate(seqs[a:b]).tolist() if b > a else [] for a, b in itertools.pairwise(docs)]


def mdf_command() -> list[str]:
    """The installed ``mdf`` command beside this interpreter."""
    return [str(Path(sys.executable).with_name("mdf"))]


def run_mdf(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``mdf ARGS`` in a subprocess, as users run it (exit code and one-line errors included)."""
    return subprocess.run(
        [*mdf_command(), *args], capture_output=True, text=True, cwd=cwd, env={**os.environ, **(env or {})}, timeout=600
    )


def write_parquet(path: Path, texts: list[Any], **extra: list[Any]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    cols = {"id": [str(i) for i in range(len(texts))], "text": texts, **extra}
    pq.write_table(pa.table(cols), path)
    return path
