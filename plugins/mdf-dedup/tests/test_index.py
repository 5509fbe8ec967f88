"""The persistent index: a crawl deduplicated against earlier ones keeps what one run over all of them keeps."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from dedup_helpers import exact_corpus
from index_helpers import ids, run, split
from test_minhash import THRESHOLD, precision_recall

from mdf.demo_data import dedup_table
from mdf_dedup.index.files import IndexFiles
from mdf_dedup.index.manifest import read_manifest


def exact(index: str | None = None, mode: str = "read") -> dict:
    params = {"index": index, "index_mode": mode, "index_source": "id"} if index else {}
    return {"exact_dedup": params}


def minhash(index: str | None = None, mode: str = "read") -> dict:
    params = {"index": index, "index_mode": mode, "index_source": "id"} if index else {}
    return {"minhash_dedup": {"threshold": THRESHOLD, **params}}


@pytest.mark.parametrize(("buckets_a", "buckets_b"), [(1, 1), (4, 2), (2, 3)])
def test_exact_split_keeps_what_one_run_keeps(tmp_path, buckets_a, buckets_b):
    """Run A (update) then B (read) = one run over A + B, row for row, whatever the two runs' bucket counts;
    B's rejected rows name A's copy. Fails without the index (B keeps A's copies): seen."""
    table = exact_corpus(3000)
    globs = split(tmp_path, table)
    index = str(tmp_path / "index")
    one, _, _ = run(tmp_path, globs["ab"], exact(), "one")
    kept_a, _, _ = run(tmp_path, globs["a"], exact(index, "update"), "a", buckets=buckets_a)
    kept_b, rej_b, m = run(tmp_path, globs["b"], exact(index, "read"), "b", buckets=buckets_b)
    assert ids(kept_a) | ids(kept_b) == ids(one) and not ids(kept_a) & ids(kept_b)
    assert m.balanced
    by_index = rej_b.filter(pc.equal(rej_b.column("_reason"), "exact_dedup:duplicate_of_index"))
    assert by_index.num_rows > 100
    text_of = dict(zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True))
    pairs = zip(by_index.column("text").to_pylist(), by_index.column("_duplicate_of").to_pylist(), strict=True)
    for row_text, earlier in pairs:
        assert earlier in ids(kept_a) and text_of[earlier] == row_text
    in_run = rej_b.filter(pc.equal(rej_b.column("_reason"), "exact_dedup:duplicate"))
    assert in_run.column("_duplicate_of").null_count == in_run.num_rows
    (gen,) = read_manifest(IndexFiles(index))["generations"]
    assert gen["keys"] == len(ids(kept_a)) and gen["buckets"] == buckets_a
    assert gen["key_bytes"] / gen["keys"] <= 16


def test_three_crawls_each_updating(tmp_path):
    """A, B, C each in update mode = one run over A + B + C; the index ends with three generations."""
    table = exact_corpus(3000, seed=5)
    parts = [table.slice(0, 1000), table.slice(1000, 1000), table.slice(2000)]
    index = str(tmp_path / "index")
    kept: set[str] = set()
    for i, part in enumerate(parts):
        globs = split(tmp_path / f"c{i}", part)
        for half in ("a", "b"):
            out, _, _ = run(tmp_path, globs[half], exact(index, "update"), f"c{i}{half}", buckets=2)
            kept |= ids(out)
    (tmp_path / "all").mkdir()
    whole = split(tmp_path / "all", table)
    one, _, _ = run(tmp_path, whole["ab"], exact(), "one")
    assert kept == ids(one)
    assert len(read_manifest(IndexFiles(index))["generations"]) == 6


def test_minhash_split_matches_one_run(tmp_path):
    """MinHash: A (update) then B (update): precision and recall within 0.005 of one run over A + B. Fails
    without the index (recall 0.47 of 0.95): seen."""
    table = dedup_table(3000, exact_rate=0.1, near_rate=0.1, seed=21)
    globs = split(tmp_path, table)
    index = str(tmp_path / "index")
    _, rej_one, _ = run(tmp_path, globs["ab"], minhash(), "one")
    _, rej_a, _ = run(tmp_path, globs["a"], minhash(index, "update"), "a", buckets=2)
    _, rej_b, _ = run(tmp_path, globs["b"], minhash(index, "update"), "b", buckets=2)
    rej_split = pa.concat_tables([t.select(rej_one.column_names) for t in (rej_a, rej_b)])
    p_one, r_one = precision_recall(table, rej_one)
    p_split, r_split = precision_recall(table, rej_split)
    print(f"minhash one run: precision {p_one:.4f} recall {r_one:.4f}; split: {p_split:.4f} {r_split:.4f}")
    assert abs(p_one - p_split) <= 0.005 and abs(r_one - r_split) <= 0.005
    assert pc.sum(pc.equal(rej_b.column("_reason"), "minhash_dedup:duplicate_of_index")).as_py() > 50
    assert len(read_manifest(IndexFiles(index))["generations"]) == 2


@pytest.mark.usefixtures("local_ray")
def test_split_on_ray_keeps_what_one_inline_run_keeps(tmp_path):
    """On Ray the bucket actors load their shard of the index and publish theirs: A (update, Ray, 2 buckets)
    then B (update, Ray, 2 buckets) keep the texts one inline run over A + B keeps, each once (exact: on Ray
    which copy a run keeps may differ, not how many); MinHash within 0.005. Fails without the index (texts of
    A kept again in B): seen."""
    ray = {"type": "ray", "batch_rows": 250}
    table = exact_corpus(2000, seed=14)
    globs = split(tmp_path / "exact", table)
    index = str(tmp_path / "index-exact")
    one, _, _ = run(tmp_path, globs["ab"], exact(), "one")
    kept_a, _, _ = run(tmp_path, globs["a"], exact(index, "update"), "a", ray, buckets=2)
    kept_b, rej_b, _ = run(tmp_path, globs["b"], exact(index, "update"), "b", ray, buckets=2)
    texts = kept_a.column("text").to_pylist() + kept_b.column("text").to_pylist()
    assert sorted(texts) == sorted(one.column("text").to_pylist())
    assert rej_b.column("_duplicate_of").null_count < rej_b.num_rows
    assert len(read_manifest(IndexFiles(index))["generations"]) == 2
    table = dedup_table(2000, exact_rate=0.1, near_rate=0.1, seed=24)
    globs = split(tmp_path / "minhash", table)
    index = str(tmp_path / "index-minhash")
    _, rej_one, _ = run(tmp_path, globs["ab"], minhash(), "m-one")
    _, rej_a, _ = run(tmp_path, globs["a"], minhash(index, "update"), "m-a", ray, buckets=2)
    _, rej_b, _ = run(tmp_path, globs["b"], minhash(index, "read"), "m-b", ray, buckets=2)
    rej_split = pa.concat_tables([t.select(rej_one.column_names) for t in (rej_a, rej_b)])
    (p_one, r_one), (p_split, r_split) = precision_recall(table, rej_one), precision_recall(table, rej_split)
    print(f"ray minhash one run: precision {p_one:.4f} recall {r_one:.4f}; split: {p_split:.4f} {r_split:.4f}")
    assert abs(p_one - p_split) <= 0.005 and abs(r_one - r_split) <= 0.005
