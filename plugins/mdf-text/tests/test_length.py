from __future__ import annotations

import pyarrow as pa
import pytest

from mdf.testing import check_operator_contract, run_operator
from mdf_text import TextLengthFilter


def test_length_counts_code_points_not_bytes():
    texts = ["abcd", "é" * 4, "😀" * 4, "日本語の", "abc", "abcdef", "", None]
    batch = pa.RecordBatch.from_pydict({"id": list(range(len(texts))), "text": texts})
    kept, rejected = run_operator(TextLengthFilter(min_length=4, max_length=5), batch)
    assert kept.column("id").to_pylist() == [0, 1, 2, 3]
    assert rejected.column("_reason").to_pylist() == [
        "text_length_filter:too_short",
        "text_length_filter:too_long",
        "text_length_filter:too_short",
        "text_length_filter:null_text",
    ]


def test_bounds_are_inclusive_and_max_optional():
    batch = pa.RecordBatch.from_pydict({"text": ["x" * 200, "x" * 199, "x" * 10**6]})
    kept, _ = run_operator(TextLengthFilter(min_length=200), batch)
    assert [len(t) for t in kept.column("text").to_pylist()] == [200, 10**6]


def test_large_string_and_other_column():
    batch = pa.RecordBatch.from_pydict({"body": pa.array(["hello", "hi"], pa.large_string())})
    kept, _ = run_operator(TextLengthFilter(column="body", min_length=3), batch)
    assert kept.column("body").to_pylist() == ["hello"]


def test_params_checked():
    with pytest.raises(Exception, match="swap them"):
        TextLengthFilter(min_length=10, max_length=5)
    with pytest.raises(Exception, match="greater than or equal to 0"):
        TextLengthFilter(min_length=-1)


def test_contract():
    batch = pa.RecordBatch.from_pydict({"id": [1, 2, 3], "text": ["a" * 300, "short", None]})
    check_operator_contract(TextLengthFilter(min_length=200), batch, id_column="id")


@pytest.mark.parametrize("seed", range(5))
def test_matches_python_len_on_random_multibyte_text(seed):
    import random

    rng = random.Random(seed)
    alphabet = ["a", "é", "日", "😀", " "]  # 1, 2, 3 and 4 UTF-8 bytes
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 90))) for _ in range(3000)]
    for lo, hi in [(10, 40), (0, 5), (25, None), (1, 1)]:
        kept, _ = run_operator(
            TextLengthFilter(min_length=lo, max_length=hi), pa.RecordBatch.from_pydict({"text": texts})
        )
        assert kept.column("text").to_pylist() == [t for t in texts if lo <= len(t) and (hi is None or len(t) <= hi)]
