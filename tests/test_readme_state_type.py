"""The README's custom state type example runs as printed: a deduplicator with matches() and its own state."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa

from mdf import KeyState
from mdf.testing import run_operator

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_example() -> dict:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    code = next(b for b in blocks if "class FirstOwner(StateType)" in b)
    assert len(code.strip().splitlines()) <= 40
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    return namespace


def test_readme_state_type_dedups_across_buckets_and_batches():
    ns = readme_example()
    op = ns["DocIdDedup"](cluster_column="kept_at")
    op.attach_state(KeyState.local(3), "docs")
    first = pa.record_batch({"doc_id": pa.array([5, 6, 5, 7], pa.uint64())})
    second = pa.record_batch({"doc_id": pa.array([7, 8, 6], pa.uint64())})
    kept1, rej1 = run_operator(op, first)
    kept2, rej2 = run_operator(op, second)
    assert kept1.column("doc_id").to_pylist() == [5, 6, 7] and kept1.column("kept_at").to_pylist() == [0, 1, 3]
    assert kept2.column("doc_id").to_pylist() == [8]
    assert rej1.num_rows + rej2.num_rows == 3
    assert set(rej2.column("_reason").to_pylist()) == {"doc_id_dedup:duplicate"}
    assert np.array_equal(rej2.column("kept_at").to_numpy(), [3, 1])  # the position of the kept row
