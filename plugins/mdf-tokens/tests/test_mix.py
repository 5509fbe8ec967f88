"""The ``megatron`` reader mixing weighted sources to a token budget: the weights met in tokens within 1 %, the budget
met, the same files for the same seed (and on Ray as inline), a source smaller than its share repeated, documents
moved only inside the shuffle window.

The sources are Megatron files written here with numpy from the spec (``write_index``), every token of a document
carrying its source and document number, so each output document says where it came from.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mdf_tokens.megatron.format import write_index
from token_helpers import documents_of, read_megatron

SOURCE = 1_000_000  # token = source * SOURCE + document number in the source (int32 files)


def make_source(folder: Path, s: int, docs: int, files: int, seed: int, mean: float = 300.0) -> int:
    """``files`` Megatron pairs of ``docs`` documents in all (log-normal lengths); returns the source's tokens."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.lognormal(np.log(mean), 0.8, docs), 1, 20_000).astype(np.int32)
    folder.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, docs, files + 1).astype(int)
    for f in range(files):
        lo, hi = bounds[f], bounds[f + 1]
        ids = np.repeat(s * SOURCE + np.arange(lo, hi, dtype=np.int32), lengths[lo:hi])
        (folder / f"part-{f:03d}.bin").write_bytes(ids.astype(np.int32).tobytes())
        with open(folder / f"part-{f:03d}.idx", "wb") as out:
            write_index(out, np.dtype(np.int32), lengths[lo:hi], np.arange(hi - lo + 1))
    return int(lengths.sum())


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    root = tmp_path_factory.mktemp("sources")
    tokens = [
        make_source(root / "web", 0, 6000, 5, seed=1),
        make_source(root / "code", 1, 2000, 3, seed=2, mean=900),
        make_source(root / "books", 2, 150, 1, seed=3, mean=250),
    ]
    return root, tokens


def mix_recipe(root: Path, out: Path, **reader) -> dict:
    spec = {
        "type": "megatron",
        "sources": [
            {"paths": [str(root / "web")], "weight": 0.6, "name": "web"},
            {"paths": [str(root / "code")], "weight": 0.3, "name": "code"},
            {"paths": [str(root / "books")], "weight": 0.1, "name": "books"},
        ],
        "seed": 7,
        "shuffle_window": 64,
        "shards": 4,
        **reader,
    }
    return {
        "reader": spec,
        "stages": [{"name": "stats", "operators": ["token_stats"]}],
        "writer": {"type": "megatron", "path": str(out)},
        "rejected": {"type": "parquet", "path": f"{out}-rejected"},
    }


def output_docs(out: Path) -> list[list[int]]:
    docs = []
    for idx in sorted(out.glob("*.idx")):
        docs += documents_of(str(idx)[:-4])
    return docs


def test_weights_met_in_tokens_within_one_percent_and_the_budget_met(run_recipe, tmp_path: Path, sources):
    root, tokens = sources
    budget = 1_200_000  # books (~50 K tokens) is repeated: 0.1 x 1.2 M = 120 K tokens
    _, _, metrics = run_recipe(mix_recipe(root, tmp_path / "out", max_tokens=budget))
    got = np.zeros(3)
    for doc in output_docs(tmp_path / "out"):
        got[doc[0] // SOURCE] += len(doc)
    assert abs(got.sum() - budget) / budget < 0.01, got.sum()
    shares = got / got.sum()
    for share, weight in zip(shares, [0.6, 0.3, 0.1], strict=True):
        assert abs(share - weight) / weight < 0.01, shares
    counters = metrics.stages[0].operators[0].counters
    assert counters["tokens"] == int(got.sum())
    assert [counters[f"tokens_by_source/{n}"] for n in ("web", "code", "books")] == got.astype(int).tolist()
    assert got[2] > tokens[2]  # the small source was repeated to meet its weight


def test_without_max_tokens_the_weights_decide_the_total_and_nothing_repeats(run_recipe, tmp_path: Path, sources):
    root, tokens = sources
    run_recipe(mix_recipe(root, tmp_path / "out"))
    docs = output_docs(tmp_path / "out")
    seen = [d[0] for d in docs]
    assert len(seen) == len(set(seen)), "a document was repeated"
    got = np.bincount([d // SOURCE for d in seen], weights=[len(d) for d in docs], minlength=3)
    expected_total = min(t / w for t, w in zip(tokens, [0.6, 0.3, 0.1], strict=True))
    assert abs(got.sum() - expected_total) / expected_total < 0.01


def test_same_seed_same_bytes_other_seed_other_order(run_recipe, tmp_path: Path, sources):
    root, _ = sources
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        run_recipe(mix_recipe(root, tmp_path / name, max_tokens=600_000, seed=seed))
    files = sorted(p.name for p in (tmp_path / "a").glob("mix-*"))
    assert files and files == sorted(p.name for p in (tmp_path / "b").glob("mix-*"))
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert output_docs(tmp_path / "a") != output_docs(tmp_path / "c")


def test_documents_move_only_inside_the_shuffle_window(run_recipe, tmp_path: Path, sources):
    """Each output shard reads a source's slice one window of 64 documents after another, in a seeded order: a
    window's documents come out as one run (shuffled inside it), and no window comes back (one epoch here)."""
    root, _ = sources
    run_recipe(mix_recipe(root, tmp_path / "out", max_tokens=1_200_000))
    for idx in sorted((tmp_path / "out").glob("*.idx")):
        docs = [d[0] for d in documents_of(str(idx)[:-4])]
        web = np.array([d for d in docs if d // SOURCE == 0])
        assert len(web) > 128
        k = int(idx.stem.split("-")[1])
        windows = ((web - 6000 * k // 4) // 64).tolist()  # windows count from the shard's slice's first document
        runs = [w for i, w in enumerate(windows) if i == 0 or w != windows[i - 1]]
        assert len(runs) == len(set(runs)), runs
        assert runs != sorted(runs), "windows in file order: not shuffled"
        assert not np.all(np.diff(web) > 0), "not shuffled"


def test_every_stretch_of_a_part_carries_the_weights(run_recipe, tmp_path: Path, sources):
    """The sources are interleaved in proportion, not one after the other: each tenth of a part file holds each
    source's share of its tokens within a few documents."""
    root, _ = sources
    run_recipe(mix_recipe(root, tmp_path / "out", max_tokens=1_200_000, shards=1))
    (idx,) = sorted((tmp_path / "out").glob("*.idx"))
    docs = documents_of(str(idx)[:-4])
    for part in np.array_split(np.arange(len(docs)), 10):
        got = np.zeros(3)
        for i in part:
            got[docs[i][0] // SOURCE] += len(docs[i])
        assert abs(got[0] / got.sum() - 0.6) < 0.08, got


def test_one_source_reads_every_document_once_in_order(run_recipe, tmp_path: Path, sources):
    root, _ = sources
    run_recipe(
        {
            "reader": {"type": "megatron", "paths": [str(root / "code")]},
            "stages": [{"name": "stats", "operators": ["token_stats"]}],
            "writer": {"type": "megatron", "path": str(tmp_path / "out")},
        }
    )
    for f in sorted((root / "code").glob("*.idx")):
        want, _ = read_megatron(str(f)[:-4])
        got, _ = read_megatron(tmp_path / "out" / f.stem)
        assert [s.tolist() for s in got] == [s.tolist() for s in want]


def test_a_reader_keeps_no_index_after_a_shard(sources):
    """The inline executor's threads share one reader and a Ray loader reads shard after shard: a shard's indexes and
    maps must go with it, or memory grows with the input. Seen red with the shard reading the shared files (every
    file's document lengths stayed cached on the reader)."""
    from mdf_tokens.megatron.reader import MegatronReader

    root, _ = sources
    reader = MegatronReader(**{k: v for k, v in mix_recipe(root, root / "x")["reader"].items() if k != "type"})
    for shard in reader.shards():
        assert sum(len(b) for b in reader.read(shard, 500)) > 0
    files = [f for s in reader.sources() for f in s.files]
    assert all(f._index is None and "doc_tokens" not in f.__dict__ and "bounds" not in f.__dict__ for f in files)


def test_resume_refuses_a_mix_whose_source_changed(tmp_path: Path, sources):
    """Every file of every source is in the run's fingerprint (``Reader.input_files``), not only the file each shard
    names. Seen red with the fingerprint taken from the shards' paths (the rewritten code file went unnoticed)."""
    import json
    import shutil

    from token_helpers import run_mdf

    root, _ = sources
    src = tmp_path / "src"
    shutil.copytree(root, src)
    recipe = mix_recipe(src, tmp_path / "out", max_tokens=100_000)
    path = tmp_path / "mix.json"
    path.write_text(json.dumps(recipe))
    assert run_mdf("run", "-q", str(path)).returncode == 0
    with open(src / "code" / "part-002.bin", "ab") as f:
        f.write(b"\0\0\0\0")
    again = run_mdf("run", "-q", "--resume", str(path))
    assert again.returncode == 2 and "part-002.bin" in again.stderr, again.stderr
