from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from token_helpers import real_texts, train_tokenizers


@pytest.fixture(scope="session")
def texts() -> list[str]:
    return real_texts()


@pytest.fixture(scope="session")
def tokenizers_dir(tmp_path_factory: pytest.TempPathFactory, texts: list[str]) -> dict[str, Path]:
    """The four tokenizers, trained once per test session on a sample of the real texts (every 4th, its first 1,000
    characters: 0.9 M characters, trained in seconds; the vocabulary still covers the scripts of the whole set)."""
    pytest.importorskip("tokenizers", reason="the tests train their tokenizers with tokenizers (mdf-tokens[test])")
    sample = [t[:1_000] for t in texts[::4]]
    return train_tokenizers(sample, tmp_path_factory.mktemp("tokenizers"))
