"""The Parquet writer's encodings: a dictionary only where values repeat; the content is what was written."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from mdf.io.parquet import ParquetWriter, dictionary_columns


def _batch(rows: int) -> pa.RecordBatch:
    return pa.record_batch(
        {
            "id": [f"doc-{i:07d}" for i in range(rows)],
            "text": [f"text {i} " * 40 for i in range(rows)],
            "lang": ["en", "de", "fr"] * (rows // 3) + ["en"] * (rows % 3),
            "score": [i % 5 for i in range(rows)],
        }
    )


def test_distinct_columns_are_written_plain_and_repeating_ones_with_a_dictionary(tmp_path):
    """Arrow's default tries a dictionary for every column and falls back to plain once it passes 1 MB: ids and
    texts paid the hashing, a compressed dictionary page and the fall-back in every row group (W1: ~10 % of the
    run's instructions under the dictionary page's write). Polars writes such columns plain.

    Seen red on eefbc81: ``id`` and ``text`` had a dictionary page (``has_dictionary_page`` True)."""
    w = ParquetWriter(path=str(tmp_path / "out"))
    batches = [_batch(3000), _batch(2000)]
    for b in batches:
        w.write(b, "s0")
    (path,) = w.commit("s0")
    meta = pq.read_metadata(path)
    for g in range(meta.num_row_groups):
        by_name = {meta.row_group(g).column(c).path_in_schema: meta.row_group(g).column(c) for c in range(4)}
        assert not by_name["id"].has_dictionary_page and not by_name["text"].has_dictionary_page
        assert by_name["lang"].has_dictionary_page and by_name["score"].has_dictionary_page
    assert pq.read_table(path).equals(pa.Table.from_batches(batches))


def test_a_short_first_batch_or_a_nested_schema_keeps_arrows_default():
    assert dictionary_columns(_batch(10)) is True  # too few values to judge
    nested = pa.record_batch({"id": [str(i) for i in range(500)], "tags": [["a", "b"]] * 500})
    assert dictionary_columns(nested) is True
    coded = pa.record_batch({"c": pa.array([str(i) for i in range(500)]).dictionary_encode()})
    assert dictionary_columns(coded) == ["c"]  # already a dictionary: written as one


def test_a_shard_that_keeps_no_row_still_commits_a_readable_file(tmp_path):
    """The Arrow writer is made on the first batch; a part that gets none makes it at the close.

    Seen red with the close skipping a part that has no writer yet: the commit's rename found no file."""
    w = ParquetWriter(path=str(tmp_path / "out"))
    w.write(_batch(100).slice(0, 0), "s0")
    (path,) = w.commit("s0")
    table = pq.read_table(path)
    assert table.num_rows == 0 and table.schema.names == ["id", "text", "lang", "score"]
