import pyarrow as pa

from mdf.testing import check_operator_contract, run_operator
from mdf_example.plugin import WordCountRefiner


def test_counts_and_rejects(make_batch):
    batch = make_batch(id=[1, 2, 3], text=["one two three", "one", None])
    kept, rejected = run_operator(WordCountRefiner(min_words=2), batch)
    assert kept.column("word_count").to_pylist() == [3]
    assert rejected.column("_reason").to_pylist() == ["word_count_refiner:too_few_words"] * 2
    check_operator_contract(WordCountRefiner(min_words=2), batch, id_column="id")


def test_runs_in_a_recipe(tmp_path, run_recipe):
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": ["a b c", "a"]}), tmp_path / "in.parquet")
    kept, rejected, metrics = run_recipe(
        {
            "reader": {"type": "parquet", "paths": [str(tmp_path / "in.parquet")]},
            "stages": [{"name": "count", "operators": [{"word_count_refiner": {"min_words": 2}}]}],
        }
    )
    assert kept.column("word_count").to_pylist() == [3] and rejected.num_rows == 1 and metrics.balanced
