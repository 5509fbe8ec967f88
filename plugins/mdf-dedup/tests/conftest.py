from __future__ import annotations

import os

# Ray started by these tests binds to 127.0.0.1 only; must be set before ray is imported anywhere.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from pathlib import Path

import pytest
from dedup_helpers import exact_corpus, write_corpus
from index_helpers import run


@pytest.fixture
def built(tmp_path: Path) -> tuple[str, str]:
    """An index built by an exact_dedup run over crawl A; the glob of crawl B."""
    table = exact_corpus(1200, seed=9)
    glob_a = write_corpus(tmp_path / "a", table.slice(0, 600), files=2)
    glob_b = write_corpus(tmp_path / "b", table.slice(600), files=2)
    index = str(tmp_path / "index")
    run(tmp_path, glob_a, {"exact_dedup": {"index": index, "index_mode": "update", "index_source": "id"}}, "a")
    return index, glob_b
