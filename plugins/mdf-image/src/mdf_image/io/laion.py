"""``laion_parquet`` reader: LAION / img2dataset-style Parquet (url, caption, encoded image bytes per row).

Listing, row-group sharding and streaming are core's Parquet reader's; this reader only picks the columns,
gives them the names the image operators default to (``image``, ``url``, ``caption``, ``id``) and turns rows
without image bytes (img2dataset keeps failed downloads as rows with a null image) into rejected rows with a
reason instead of letting them reach an operator.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import Field

from mdf import REASON, InputError, Params, ParquetReader, Reader, RecipeError, Shard, lit
from mdf_image.io import sample_data_hint


class LaionParquetReader(Reader):
    """Reads LAION-style Parquet: image bytes, url, caption (+ extra columns); rows without an image rejected."""

    name = "laion_parquet"
    modality = "image"

    class Params(Params):
        paths: list[str] = Field(min_length=1, description="files, folders or globs ('**' allowed)")
        image_column: str = Field("image", description="binary column of encoded images (img2dataset: 'jpg')")
        url_column: str | None = Field("url", description="column of source URLs, read as 'url' (none = skip)")
        caption_column: str | None = Field("caption", description="column of captions, read as 'caption' (none = skip)")
        id_column: str | None = Field(None, description="column of sample ids, read as 'id' (img2dataset: 'key')")
        extra_columns: list[str] = Field(default_factory=list, description="more columns passed through as they are")
        row_groups_per_shard: int = Field(0, ge=0, description="cut files into shards of N row groups (0 = file)")

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        p = self.params
        renames = {p.image_column: "image", p.url_column: "url", p.caption_column: "caption", p.id_column: "id"}
        self._renames = {src: dst for src, dst in renames.items() if src is not None}
        columns = list(dict.fromkeys([*self._renames, *p.extra_columns]))
        self._columns = columns
        # two views of the same files: listing checks the columns itself (naming this reader's parameters);
        # reading projects them
        self._listing = ParquetReader(paths=p.paths, row_groups_per_shard=p.row_groups_per_shard)
        self._parquet = ParquetReader(paths=p.paths, columns=columns, row_groups_per_shard=p.row_groups_per_shard)

    def shards(self) -> list[Shard]:
        with sample_data_hint():
            shards = self._listing.shards()
        for path in dict.fromkeys(s.path for s in shards):
            self._check_schema(path)
        return shards

    def _check_schema(self, path: str) -> None:
        """Refuse, before any work, a file that lacks a named column or whose image column is not bytes."""
        try:
            schema = pq.read_schema(path)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(f"cannot read Parquet file {path}: {exc}") from exc
        missing = [c for c in self._columns if c not in schema.names]
        if missing:
            raise RecipeError(
                f"column(s) {missing} not in {path} (it has {schema.names}); set image_column, url_column, "
                "caption_column, id_column or extra_columns to columns the file has (none skips url/caption/id)",
                "reader",
            )
        kind = schema.field(self.params.image_column).type
        if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
            raise RecipeError(
                f"image_column '{self.params.image_column}' of {path} is {kind}, not binary (encoded image bytes)",
                "reader.image_column",
            )

    def read(self, shard: Shard, batch_rows: int) -> Iterator[pa.RecordBatch]:
        for batch in self._parquet.read(shard, batch_rows):
            yield self._rename(batch)

    def _rename(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        names = [self._renames.get(n, n) for n in batch.schema.names]
        batch = pa.RecordBatch.from_arrays(batch.columns, names=names)
        image = batch.column("image")
        if image.null_count == 0:
            return batch
        reason = pc.if_else(pc.is_null(image), lit("reader:missing_image"), pa.scalar(None, pa.string()))
        return batch.append_column(REASON, reason)
