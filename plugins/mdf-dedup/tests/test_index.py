"""The persistent index: a crawl deduplicated against earlier ones keeps what one run over all of them keeps."""

from __future__ import annotations

import pyarrow.compute as pc
from dedup_helpers import exact_corpus
from index_helpers import ids, run, split

from mdf_dedup.index.files import IndexFiles
from mdf_dedup.index.manifest import read_manifest


def exact(index: str | None = None, mode: str = "read") -> dict:
    params = {"index": index, "index_mode": mode, "index_source": "id"} if index else {}
    return {"exact_dedup": params}


def test_exact_split_keeps_what_one_run_keeps(tmp_path):
    """Run A (update) then B (read) = one run over A + B, row for row; B's rejected rows name A's copy."""
    table = exact_corpus(3000)
    globs = split(tmp_path, table)
    index = str(tmp_path / "index")
    one, _, _ = run(tmp_path, globs["ab"], exact(), "one")
    kept_a, _, _ = run(tmp_path, globs["a"], exact(index, "update"), "a")
    kept_b, rej_b, _ = run(tmp_path, globs["b"], exact(index, "read"), "b")
    assert ids(kept_a) | ids(kept_b) == ids(one)
    assert len(ids(kept_a) & ids(kept_b)) == 0
    by_index = rej_b.filter(pc.equal(rej_b.column("_reason"), "exact_dedup:duplicate_of_index"))
    assert by_index.num_rows > 100
    text_of = dict(zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True))
    for row_text, earlier in zip(by_index.column("text").to_pylist(), by_index.column("_duplicate_of").to_pylist(),
                                 strict=True):  # fmt: skip
        assert earlier in ids(kept_a) and text_of[earlier] == row_text
    in_run = rej_b.filter(pc.equal(rej_b.column("_reason"), "exact_dedup:duplicate"))
    assert in_run.column("_duplicate_of").null_count == in_run.num_rows
    manifest = read_manifest(IndexFiles(index))
    (gen,) = manifest["generations"]
    assert gen["keys"] == len(ids(kept_a)) and gen["key_bytes"] / gen["keys"] <= 16
