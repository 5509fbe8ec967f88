"""A generation as an ``update`` run writes it: batches' keys kept unsorted during the run and sorted at the end
(``mdf_kernels.sort_unique_pairs``), sources stored once a row. What it must hold is what one stable sort of every
key after the run gives: each key once, sorted, with the source id of the first row that added it."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mdf import OperatorError
from mdf_dedup.index.files import IndexFiles
from mdf_dedup.index.manifest import gen_files, new_manifest, read_manifest, write_manifest
from mdf_dedup.index.state import IndexState
from mdf_dedup.index.store import LoadedIndex, write_bucket


def _conf(index: str) -> dict:
    return {"path": index, "mode": "update", "operator": "exact_dedup", "settings": {"hash": "xxh3_64"},
            "buckets": 1, "run": {"fingerprint": "f", "output": "/out"}}  # fmt: skip


def _batches(seed: int = 3) -> list[tuple[np.ndarray, list[str | None]]]:
    """Batches of (keys, source id per key), with keys repeated across batches under other ids (a retried batch
    adds its keys again) and a row filing several keys, like MinHash's bands; some ids null."""
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 2**64, 3000, dtype=np.uint64)
    out = []
    for b in range(12):
        rows = [None if r % 17 == 0 else f"doc-{b}-{r}" for r in range(150)]
        keys = rng.choice(pool, 600, replace=False)  # a key at most once a batch, as claims are
        out.append((keys, [rows[i // 4] for i in range(600)]))
    return out


def _visit(state: IndexState, keys: np.ndarray, sources: list[str | None], conf: dict) -> None:
    """A batch as :meth:`IndexedDedup.earlier` sends it: every key claimed, ids as indices into the rows'."""
    rows = pa.array([*sorted({s for s in sources if s is not None}), None], pa.string())
    where = {s: i for i, s in enumerate(rows.to_pylist())}
    ids = pa.DictionaryArray.from_arrays(pa.array([where[s] for s in sources], pa.int32()), rows)
    state.visit(keys, np.ones(len(keys), dtype=bool), ids, conf)


def test_generation_holds_each_key_once_with_its_first_source(tmp_path):
    """Sorted unique keys and, per key, the id of the first batch that added it, whether the bucket was
    snapshotted (pickled) mid-run or not; the index then finds every key and names that id. Fails when the
    kernel sorts its parts unstably (``sort_unstable_by_key``: later ids win): seen; without the re-numbering of
    the ids after dropping the rows no key kept: seen."""
    index = str(tmp_path / "index")
    conf = _conf(index)
    batches = _batches()
    expected: dict[int, str | None] = {}
    for keys, sources in batches:
        for k, s in zip(keys.tolist(), sources, strict=True):
            expected.setdefault(k, s)
    state = IndexState()
    for i, (keys, sources) in enumerate(batches):
        _visit(state, keys, sources, conf)
        if i == 5:  # a checkpoint mid-run: the snapshot holds every batch's keys, the run goes on from it
            state = pickle.loads(pickle.dumps(state))
    result = state.finish(conf["run"])
    IndexState.commit("ns", [result], conf["run"])

    files = IndexFiles(index)
    (gen,) = read_manifest(files)["generations"]
    keys_name, sources_name = gen_files(gen, 0)
    held = np.load(files.path(keys_name))
    assert held.tolist() == sorted(expected)
    stored = pq.read_table(files.path(sources_name)).column("source").combine_chunks().cast(pa.string())
    assert stored.to_pylist() == [expected[k] for k in sorted(expected)]

    loaded = LoadedIndex(files, read_manifest(files), 0, 1, skip_run=None)
    probe = np.array([*sorted(expected)[::-7], 1, 2], dtype=np.uint64)
    hit = loaded.contains(probe)
    assert hit.tolist() == [k in expected for k in probe.tolist()]
    named = loaded.sources(loaded.locate(probe[hit])).to_pylist()
    assert named == [expected[k] for k in probe[hit].tolist()]


def test_a_bucket_snapshotted_after_finish_holds_no_keys_and_commits_what_it_wrote(tmp_path):
    """The run's last snapshot is taken after finish (``Checkpoint.save``): it holds what finish wrote instead of
    the keys, and a resume from it commits those files, after checking them. Red with the keys kept after finish
    (the snapshot as big as before: seen) and with a restored bucket finishing again instead of checking its files
    (the missing file unnoticed: seen)."""
    index = str(tmp_path / "index")
    conf = _conf(index)
    state = IndexState()
    expected: set[int] = set()
    for keys, sources in _batches():
        _visit(state, keys, sources, conf)
        expected.update(keys.tolist())
    unfinished = len(pickle.dumps(state))
    result = state.finish(conf["run"])
    snapshot = pickle.dumps(state)
    assert len(snapshot) < unfinished / 10

    files = IndexFiles(index)
    keys_name, _ = gen_files(result["gen"], 0)
    Path(files.path(keys_name)).rename(tmp_path / "away")
    with pytest.raises(OperatorError, match=r"b0000-of-0001\.keys\.npy written by this run is missing"):
        pickle.loads(snapshot).finish(conf["run"])
    (tmp_path / "away").rename(files.path(keys_name))

    resumed = pickle.loads(snapshot).finish(conf["run"])
    assert resumed == result
    IndexState.commit("ns", [resumed], conf["run"])
    (gen,) = read_manifest(files)["generations"]
    assert gen["keys"] == len(expected)
    assert np.load(files.path(keys_name)).tolist() == sorted(expected)


def test_generations_that_share_keys_name_the_earliest_copy(tmp_path):
    """Three generations whose keys overlap (an update run adds only keys the index lacks, so overlaps come from
    runs that did not see each other's generations: written here by hand): the loaded index finds every key
    once and names the source id of the earliest generation holding it, also in a bucket of a run with two
    buckets (files filtered on load). Seen red with the generations' keys merged latest first."""
    index = str(tmp_path / "index")
    files = IndexFiles(index)
    manifest = new_manifest("exact_dedup", {"hash": "xxh3_64"})
    rng = np.random.default_rng(9)
    pool = rng.integers(0, 2**64, 4000, dtype=np.uint64)
    expected: dict[int, str] = {}
    for g in range(3):
        keys = np.unique(rng.choice(pool, 1500, replace=False))
        sources = pa.array([f"gen{g}-{i}" for i in range(len(keys))])
        gen = {"id": f"g-{g}", "buckets": 1}
        entry = write_bucket(files, gen, 0, keys, sources)
        manifest["generations"].append({**gen, "run": {"fingerprint": f"f{g}"}, "files": [entry]})
        for k, src in zip(keys.tolist(), sources.to_pylist(), strict=True):
            expected.setdefault(k, src)
    write_manifest(files, manifest)
    probe = np.concatenate([pool, rng.integers(0, 2**64, 500, dtype=np.uint64)])
    for bucket, buckets in ((0, 1), (0, 2), (1, 2)):
        loaded = LoadedIndex(files, read_manifest(files), bucket, buckets, skip_run=None)
        mine = probe[probe % np.uint64(buckets) == bucket]
        hit = loaded.contains(mine)
        assert hit.tolist() == [k in expected for k in mine.tolist()]
        named = loaded.sources(loaded.locate(mine[hit])).to_pylist()
        assert named == [expected[k] for k in mine[hit].tolist()]
