"""``index_kind: bloom``: an exact_dedup index kept as Bloom filters, its false-positive rate measured against the
stated one, and no false negatives."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow.compute as pc
import pytest
from dedup_helpers import exact_corpus, write_corpus
from index_helpers import ids, run, split
from test_index_errors import cli_run

from mdf.demo_data import dedup_table
from mdf.layout import metrics_path
from mdf_dedup.index import admin, bloom
from mdf_dedup.index.files import IndexFiles
from mdf_dedup.index.manifest import read_manifest


def bloom_op(index: str, mode: str = "read", rate: float | None = None) -> dict:
    params = {"index": index, "index_mode": mode, "index_kind": "bloom"}
    return {"exact_dedup": {**params, "false_positive_rate": rate} if rate else params}


@pytest.mark.parametrize("rate", [0.01, 0.001])
def test_filter_rate_on_keys_not_in_it_is_the_stated_rate(rate):
    """200 K keys in a filter, 2 M other keys asked: the share taken for members is the stated rate, within 4
    binomial standard deviations; every member is found; bytes a key as stated (1.44 log2(1/p) bits). Fails
    with the second hash of the double hashing dropped (h2 = 1: probes on adjacent bits; 0.067 against 0.001,
    0.099 against 0.01): seen."""
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 2**64 - 1, 200_000, dtype=np.uint64, endpoint=True)
    bits, probes = bloom.shape(len(keys), rate)
    packed = bloom.build(keys, bits, probes)
    assert bloom.test(packed, bits, probes, keys).all()  # no false negatives
    others = rng.integers(0, 2**64 - 1, 2_000_000, dtype=np.uint64, endpoint=True)
    others = others[~np.isin(others, keys)]
    measured = bloom.test(packed, bits, probes, others).mean()
    expected = bloom.expected_rate(len(keys), bits, probes)
    assert expected <= rate * 1.01
    assert abs(measured - rate) <= 4 * math.sqrt(rate * (1 - rate) / len(others)), (measured, rate)
    assert packed.nbytes / len(keys) <= 1.44 * math.log2(1 / rate) / 8 * 1.01


def test_split_rejects_every_earlier_copy(tmp_path):
    """A (update, bloom) then B (read, bloom): no false negatives: every B row one run over A + B rejects is
    rejected (A's copies as duplicate_of_index, with no source id), and A read against its own index keeps
    nothing. The rows B loses beyond one run's are false positives: at most a few at 0.001. Fails with the
    probes of the reader not those of the writer (another mix constant: B keeps A's copies): seen."""
    table = exact_corpus(3000, seed=41)
    globs = split(tmp_path, table)
    index = str(tmp_path / "index")
    one, _, _ = run(tmp_path, globs["ab"], {"exact_dedup": {}}, "one")
    kept_a, _, _ = run(tmp_path, globs["a"], bloom_op(index, "update"), "a", buckets=2)
    kept_b, rej_b, _ = run(tmp_path, globs["b"], bloom_op(index), "b", buckets=3)
    split_kept = ids(kept_a) | ids(kept_b)
    assert split_kept <= ids(one) and len(ids(one) - split_kept) <= 3
    by_index = rej_b.filter(pc.equal(rej_b.column("_reason"), "exact_dedup:duplicate_of_index"))
    assert by_index.num_rows > 100 and by_index.column("_duplicate_of").null_count == by_index.num_rows
    again, _, _ = run(tmp_path, globs["a"], bloom_op(index), "again", buckets=2)
    assert again is None or again.num_rows == 0
    key_state = json.loads(metrics_path(tmp_path / "b" / "out").read_text())["key_state"]
    assert any(ns.endswith("/bloom_index") for ns in key_state), key_state  # which kind ran, in the report


@pytest.mark.usefixtures("local_ray")
def test_split_on_ray_rejects_every_earlier_copy(tmp_path):
    """On Ray (2 bucket actors each loading their filters), A (update, bloom) then B (read, bloom) keep the texts
    one inline run over A + B keeps, but for false positives (at most a few at 0.001); every text of A that B
    holds is rejected by the index."""
    pytest.importorskip("ray")
    ray = {"type": "ray", "batch_rows": 250}
    table = exact_corpus(2000, seed=43)
    globs = split(tmp_path, table)
    index = str(tmp_path / "index")
    one, _, _ = run(tmp_path, globs["ab"], {"exact_dedup": {}}, "one")
    kept_a, _, _ = run(tmp_path, globs["a"], bloom_op(index, "update"), "a", ray, buckets=2)
    kept_b, rej_b, _ = run(tmp_path, globs["b"], bloom_op(index), "b", ray, buckets=2)
    texts = kept_a.column("text").to_pylist() + kept_b.column("text").to_pylist()
    assert len(texts) == len(set(texts)) and set(texts) <= set(one.column("text").to_pylist())
    assert one.num_rows - len(texts) <= 3
    by_index = rej_b.filter(pc.equal(rej_b.column("_reason"), "exact_dedup:duplicate_of_index"))
    assert set(kept_a.column("text").to_pylist()) & set(table.slice(1000).column("text").to_pylist()) <= set(
        by_index.column("text").to_pylist()
    )


def test_run_rate_on_new_rows_is_the_stated_rate(tmp_path):
    """Crawl B shares no text with A: the share of B's rows rejected as duplicate_of_index is the false-positive
    rate of A's filters (4 binomial standard deviations; ~20 K rows at 0.01), and ``mdf index info`` states the
    kind and about 1.2 bytes a key. Fails with the filters sized for 1/10 of their keys (0.995 against 0.01),
    and with h2 = 1 (0.098): seen."""
    rate, rows = 0.01, 20_000
    a = dedup_table(rows, exact_rate=1e-4, near_rate=0.0, mean_words=20, seed=51)
    b = dedup_table(rows, exact_rate=1e-4, near_rate=0.0, mean_words=20, seed=52)
    b = b.filter(pc.invert(pc.is_in(b.column("text"), a.column("text"))))
    index = str(tmp_path / "index")
    run(tmp_path, write_corpus(tmp_path / "a", a, files=2), bloom_op(index, "update", rate), "a", buckets=2)
    _, rej, _ = run(tmp_path, write_corpus(tmp_path / "b", b, files=2), bloom_op(index, "read", rate), "b")
    reasons = [] if rej is None else rej.column("_reason").to_pylist()
    measured = reasons.count("exact_dedup:duplicate_of_index") / b.num_rows
    (gen,) = read_manifest(IndexFiles(index))["generations"]
    expected = np.mean([bloom.expected_rate(f["keys"], f["bits"], f["probes"]) for f in gen["files"]])
    assert measured <= rate + 4 * math.sqrt(rate / b.num_rows), (measured, rate)
    assert abs(measured - expected) <= 4 * math.sqrt(expected / b.num_rows), (measured, expected)
    assert expected <= rate * 1.01
    info = admin.info(index)
    assert info["kind"] == "bloom" and info["key_bytes_per_key"] <= 1.3, info
    assert info["source_bytes_per_key"] == 0


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"false_positive_rate": 0.5}, "less than or equal to 0.1"),
        ({"false_positive_rate": 0}, "greater than 0"),
        ({"index_kind": "exact", "false_positive_rate": 0.01}, "false_positive_rate is for index_kind: bloom"),
        ({"index_source": "id"}, "a bloom index keeps no source ids"),
        ({"index_kind": "cuckoo"}, "index_kind"),
    ],
)
def test_bad_bloom_settings_exit_2_in_one_line(tmp_path, capsys, params, message):
    glob = write_corpus(tmp_path / "in", exact_corpus(200, seed=4), files=1)
    op = {"exact_dedup": {**bloom_op(str(tmp_path / "index"), "update")["exact_dedup"], **params}}
    code, err = cli_run(tmp_path, glob, op, "bad", capsys)
    assert code == 2 and message in err and "stages[0].operators[0]" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "index").exists()


def test_kind_mismatch_and_compact_refused(tmp_path, capsys):
    """An exact index read as bloom (and back) exits 2 naming the kinds; ``mdf index compact`` of a bloom index
    refuses. Fails with the settings only compared key by key ("made with false_positive_rate=None", not the
    kinds: seen)."""
    glob = write_corpus(tmp_path / "in", exact_corpus(400, seed=4), files=1)
    exact_index, bloom_index = str(tmp_path / "exact"), str(tmp_path / "bloom")
    run(tmp_path, glob, {"exact_dedup": {"index": exact_index, "index_mode": "update"}}, "e")
    run(tmp_path, glob, bloom_op(bloom_index, "update"), "b")
    code, err = cli_run(tmp_path, glob, bloom_op(exact_index), "r1", capsys)
    assert code == 2 and "made as index_kind: exact, this operator has index_kind: bloom" in err, err
    code, err = cli_run(tmp_path, glob, {"exact_dedup": {"index": bloom_index}}, "r2", capsys)
    assert code == 2 and "made as index_kind: bloom, this operator has index_kind: exact" in err, err
    with pytest.raises(admin.NotCompactable, match="Bloom index"):
        admin.compact(bloom_index)
