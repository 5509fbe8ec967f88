"""The ``megatron`` writer: Megatron-Core's layout read back with a reader written from its spec, dtypes, rotation at
``max_tokens_per_file``, one file pair per shard under the run's publish, ``--resume`` and ``--overwrite`` rules."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from mdf_tokens.megatron.format import FormatError, read_index, write_index
from mdf_tokens.megatron.writer import MegatronWriter
from mdf_tokens.schema import DTYPE_KEY
from token_helpers import documents_of, mdf_command, read_megatron, run_mdf


def _batch(rows: list[list[int]], dtype: str | None = "uint16") -> pa.RecordBatch:
    meta = {DTYPE_KEY: dtype.encode()} if dtype else None
    field = pa.field("tokens", pa.list_(pa.uint32()), metadata=meta)
    return pa.RecordBatch.from_arrays([pa.array(rows, field.type)], schema=pa.schema([field]))


def test_documents_and_counts_as_megatron_reads_them(tmp_path: Path):
    w = MegatronWriter(path=str(tmp_path))
    docs = [[1, 2, 3], [], [7], list(range(100, 400))]
    w.write(_batch(docs[:2]), "part")
    w.write(_batch(docs[2:]).slice(0), "part")
    assert not (tmp_path / "part.bin").exists()  # nothing visible before the commit
    paths = w.commit("part")
    assert sorted(os.path.basename(p) for p in paths) == ["part.bin", "part.idx"]
    seqs, doc_idx = read_megatron(tmp_path / "part")
    assert [s.tolist() for s in seqs] == docs
    assert doc_idx.tolist() == [0, 1, 2, 3, 4]
    assert seqs[0].dtype == np.uint16
    assert read_index(str(tmp_path / "part.idx")).tokens == 304
    assert not list(tmp_path.glob("*.tmp"))


def test_int32_without_metadata_and_an_id_past_uint16_fails_naming_the_shard(tmp_path: Path):
    w = MegatronWriter(path=str(tmp_path / "a"))
    w.write(_batch([[70_000, 1]], dtype=None), "s")
    w.commit("s")
    seqs, _ = read_megatron(tmp_path / "a" / "s")
    assert seqs[0].dtype == np.int32 and seqs[0].tolist() == [70_000, 1]
    w16 = MegatronWriter(path=str(tmp_path / "b"), dtype="uint16")
    with pytest.raises(Exception, match="shard s2 has token id 70000"):
        w16.write(_batch([[70_000]], dtype=None), "s2")


def test_a_sliced_batch_writes_only_its_rows(tmp_path: Path):
    """Seen red with the list's whole values buffer written (Arrow's .values ignores the slice)."""
    w = MegatronWriter(path=str(tmp_path))
    w.write(_batch([[1, 1], [2, 2, 2], [3]]).slice(1, 1), "s")
    w.commit("s")
    assert documents_of(tmp_path / "s") == [[2, 2, 2]]


def test_rotation_at_max_tokens_per_file_never_cuts_a_document(tmp_path: Path):
    w = MegatronWriter(path=str(tmp_path), max_tokens_per_file=10)
    docs = [[i] * n for i, n in enumerate([4, 4, 4, 25, 1, 9, 3])]
    w.write(_batch(docs[:2]), "s")
    w.write(_batch(docs[2:]), "s")
    paths = w.commit("s")
    prefixes = sorted({p[:-4] for p in paths}, key=lambda p: (len(p), p))
    got = [documents_of(p) for p in prefixes]
    assert [os.path.basename(p) for p in prefixes] == ["s", "s.1", "s.2", "s.3", "s.4"]
    assert got == [docs[0:2], docs[2:3], docs[3:4], docs[4:6], docs[6:7]]
    assert all(sum(map(len, g)) <= 10 or len(g) == 1 for g in got)


def test_abort_leaves_nothing(tmp_path: Path):
    w = MegatronWriter(path=str(tmp_path), max_tokens_per_file=2)
    w.write(_batch([[1, 2], [3, 4]]), "s")
    w.abort("s")
    assert list(tmp_path.iterdir()) == []


def test_the_reader_refuses_a_damaged_index(tmp_path: Path):
    with open(tmp_path / "x.idx", "wb") as f:
        write_index(f, np.dtype(np.uint16), np.array([2, 3], np.int32), np.array([0, 1, 2]))
    data = (tmp_path / "x.idx").read_bytes()
    (tmp_path / "x.idx").write_bytes(data[:-3])
    with pytest.raises(FormatError, match="damaged"):
        read_index(str(tmp_path / "x.idx"))


def _recipe(tmp_path: Path, src: Path, out: Path, hold: Path | None = None) -> Path:
    ops: list = ["token_stats"]
    if hold is not None:  # a run stopped at a known point: the first shard's 5 rows passed, then it waits
        ops.append({"delay_refiner": {"hold_dir": str(hold), "hold_after_rows": 5}})
    recipe = {
        "reader": {"type": "megatron", "paths": [str(src)]},
        "stages": [{"name": "s", "operators": ops}],
        "writer": {"type": "megatron", "path": str(out)},
        "executor": {"type": "inline", "workers": 1, "batch_rows": 2},
    }
    path = tmp_path / f"{out.name}.yaml"
    path.write_text(json.dumps(recipe))
    return path


def _source(folder: Path, files: int = 3) -> Path:
    folder.mkdir(parents=True)
    for f in range(files):
        lengths = np.array([3, 1, 4, 1, 5], np.int32) + f
        ids = np.repeat(np.arange(len(lengths), dtype=np.uint16) + 10 * f, lengths)
        (folder / f"f{f}.bin").write_bytes(ids.tobytes())
        with open(folder / f"f{f}.idx", "wb") as out:
            write_index(out, np.dtype(np.uint16), lengths, np.arange(len(lengths) + 1))
    return folder


def test_overwrite_and_resume_hold_as_for_parquet(tmp_path: Path):
    """A non-empty output is refused, --overwrite replaces it; a killed run leaves no part of an unfinished shard,
    --resume keeps the committed pairs and finishes the rest with the clean run's files."""
    src = _source(tmp_path / "src")
    clean = tmp_path / "clean"
    assert run_mdf("run", "-q", str(_recipe(tmp_path, src, clean))).returncode == 0
    again = run_mdf("run", "-q", str(_recipe(tmp_path, src, clean)))
    assert again.returncode == 2 and "--overwrite" in again.stderr
    assert run_mdf("run", "-q", "--overwrite", str(_recipe(tmp_path, src, clean))).returncode == 0
    hold, out = tmp_path / "hold", tmp_path / "killed"
    hold.mkdir()
    proc = subprocess.Popen(
        [*mdf_command(), "run", "-q", str(_recipe(tmp_path, src, out, hold))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not list(out.glob("*.bin")) and time.monotonic() < deadline:  # the first shard committed, the next held
        time.sleep(0.2)
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    committed = sorted(p.name for p in out.glob("*.bin"))
    assert committed and len(committed) < 3
    assert sorted(p.name for p in out.glob("*.idx")) == [n[:-4] + ".idx" for n in committed]  # whole pairs only
    (hold / "release").write_text("")
    resumed = run_mdf("run", "-q", "--resume", str(_recipe(tmp_path, src, out, hold)))
    assert resumed.returncode == 0, resumed.stderr
    for f in sorted(clean.glob("*.idx")):
        assert (out / f.name).read_bytes() == f.read_bytes()
        assert (out / f.with_suffix(".bin").name).read_bytes() == f.with_suffix(".bin").read_bytes()
    assert not list(out.glob("*.tmp"))
