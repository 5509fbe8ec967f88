"""A generation as an ``update`` run writes it: batches' keys sorted on the bucket's thread during the run and
merged at the end, sources stored once a row. What it must hold is what one sort of every key after the run
gave: each key once, sorted, with the source id of the first row that added it."""

from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mdf_dedup.index.files import IndexFiles
from mdf_dedup.index.manifest import gen_files, read_manifest
from mdf_dedup.index.state import IndexState
from mdf_dedup.index.store import LoadedIndex


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
    batches' sorted runs are merged unstably (``kind="quicksort"`` in finish: later ids win): seen; without the
    re-numbering of the ids after dropping the rows no key kept: seen."""
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
            assert not state.sorting and state.sorter is None
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
