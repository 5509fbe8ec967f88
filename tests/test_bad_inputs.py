"""The bad-input corpus (tests/bad_inputs/make_corpus.py), inline and on Ray: rows in = kept + rejected +
damaged-input rows, every damaged file listed in metrics.json and on the terminal, non-data files not read.

Guards issue 13 items 2 (a cut .jsonl.zst read short, exit 0), 4 (JSONL types from the first record),
6 (a cut .jsonl.gz exiting 130), 9 (the output folder not readable as a dataset) and 11 (a folder input reading
non-JSONL files), plus corrupt Parquet footers and pages, non-UTF-8 JSONL, empty and zero-row files.
"""

from __future__ import annotations

import os

import pytest

from mdf import DAMAGED_INPUT, shard_ids

from .bad_inputs.make_corpus import make
from .conftest import run_mdf
from .reliability import damaged_rows, metrics, table, write_recipe


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_inputs")
    return root, make(root)


def per_shard_rows(folder, ids):
    """Rows of each shard's part files (``<shard>.parquet`` and its schema pieces ``<shard>.N.parquet``)."""
    import pyarrow.parquet as pq

    out = dict.fromkeys(ids, 0)
    for p in folder.glob("*.parquet"):
        sid = p.name.removesuffix(".parquet")
        if sid not in out:
            sid = sid.rsplit(".", 1)[0]
        out[sid] += pq.read_metadata(p).num_rows
    return out


@pytest.mark.parametrize("executor", ["inline", "ray"])
@pytest.mark.parametrize("reader", ["jsonl", "parquet"])
def test_bad_input_corpus_loses_no_row(tmp_path, corpus, reader, executor):
    root, expected = corpus
    folder = root / reader
    recipe = write_recipe(tmp_path, [str(folder)], reader=reader, executor=executor)
    result = run_mdf("run", str(recipe))
    assert result.returncode == 0, result.stderr[-3000:]  # never 130, never a traceback
    assert "Traceback" not in result.stderr

    exp = expected[reader]
    files = sorted(str(folder / name) for name in exp)  # README.txt and notes.csv are not among the inputs
    ids = dict(zip(files, shard_ids(files), strict=True))
    kept, rejected = table(tmp_path / "out"), table(tmp_path / "rej")
    m = metrics(tmp_path / "out")
    assert m["balanced"] and m["rows_read"] == kept.num_rows + rejected.num_rows
    assert m["rows_written"] == kept.num_rows and m["rows_rejected"] == rejected.num_rows

    damaged = {d["file"]: d for d in damaged_rows(rejected)}
    want_damaged = {str(folder / n) for n, e in exp.items() if e["damaged"]}
    assert set(damaged) == want_damaged
    assert all(d["error"] and (d["offset"] is None or d["offset"] >= 0) for d in damaged.values())
    assert {d["file"] for d in m["damaged_inputs"]} == want_damaged
    for f in want_damaged:  # on the terminal, where nobody can miss it
        assert f"damaged input: {f}" in result.stderr.replace("\n", " ") or f in result.stdout

    kept_by = per_shard_rows(tmp_path / "out", ids.values())
    rej_by = per_shard_rows(tmp_path / "rej", ids.values())
    for name, e in exp.items():
        sid = ids[str(folder / name)]
        total = kept_by[sid] + rej_by[sid]
        if e["rows"] is None:  # a corrupt frame: garbage before detection is rejected line by line
            assert total >= e["damaged"], name
            continue
        assert total == e["rows"] + e["reader_rejects"] + e["damaged"], (name, kept_by[sid], rej_by[sid], e)
    reasons = rejected.column("_reason").to_pylist()
    assert reasons.count(DAMAGED_INPUT) == len(want_damaged)
    if reader == "jsonl":
        # item 4: the 30 good records after a first "text": 42 are read; only that record is a type mismatch
        assert sum(r.startswith("reader:type_mismatch") for r in reasons) == 1
        assert sum(r.startswith("reader:invalid_utf8") for r in reasons) == 1
        assert not any("README" in str(p) or "notes" in str(p) for p in os.listdir(tmp_path / "out"))
