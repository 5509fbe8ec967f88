"""``webdataset`` reader: tar shards whose members are grouped by key (``key.jpg`` + ``key.txt`` + ``key.json``).

Each tar file is one shard, read front to back with :mod:`tarfile`'s streaming mode (no seeking, no member
index: a tar on a pipe or an object store reads the same way). WebDataset writes the members of a sample next
to each other, so a sample ends when the key changes. A key without an image member becomes a rejected row,
and a tar that breaks off mid-way (truncated upload) ends its shard with one rejected row naming the error (the
sample being read when it broke, which may have been complete): the run goes on with the samples read so far.
"""

from __future__ import annotations

import contextlib
import os
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

import pyarrow as pa
from pydantic import Field

from mdf import REASON, Params, Reader, RecipeError, Shard, expand_paths, shard_ids
from mdf.storage import is_remote
from mdf_image.io import sample_data_hint

TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz")
SCHEMA = pa.schema([("id", pa.string()), ("image", pa.large_binary()), ("caption", pa.string()), ("json", pa.string())])


@dataclass
class _Sample:
    key: str
    image: bytes | None = None
    caption: str | None = None
    meta: str | None = None
    reason: str | None = None


@dataclass
class _Rows:
    """Column lists of the batch being built."""

    samples: list[_Sample] = field(default_factory=list)

    def batch(self) -> pa.RecordBatch:
        s = self.samples
        batch = pa.RecordBatch.from_arrays(
            [
                pa.array([x.key for x in s], pa.string()),
                pa.array([x.image for x in s], pa.large_binary()),
                pa.array([x.caption for x in s], pa.string()),
                pa.array([x.meta for x in s], pa.string()),
            ],
            schema=SCHEMA,
        )
        if any(x.reason for x in s):
            batch = batch.append_column(REASON, pa.array([x.reason for x in s], pa.string()))
        self.samples = []
        return batch


def split_key(name: str) -> tuple[str, str]:
    """``dir/000123.seg.png`` -> (``dir/000123``, ``seg.png``): WebDataset's key ends at the basename's first dot."""
    slash = name.rfind("/") + 1
    dot = name.find(".", slash)
    if dot < 0:
        return name, ""
    return name[:dot], name[dot + 1 :].lower()


class WebDatasetReader(Reader):
    """Reads WebDataset tar shards: one row per key (id, image, caption from .txt, json); imageless keys rejected."""

    name = "webdataset"
    modality = "image"

    class Params(Params):
        paths: list[str] = Field(
            min_length=1, description="tar files (.tar, .tar.gz, .tgz), folders or globs; or s3:// / https:// URLs"
        )
        image_extensions: list[str] = Field(
            ["jpg", "jpeg", "png", "webp", "gif"], min_length=1, description="member extensions that hold the image"
        )
        caption_extension: str = Field("txt", description="member extension of the caption (UTF-8 text)")
        metadata_extension: str = Field("json", description="member extension of the metadata, kept as JSON text")

    def shards(self) -> list[Shard]:
        with sample_data_hint():
            files = [f for f in expand_paths(self.params.paths) if f.lower().endswith(TAR_SUFFIXES)]
            if not files:
                raise RecipeError(f"no tar file ({', '.join(TAR_SUFFIXES)}) in {self.params.paths}", "reader.paths")
        return [Shard(sid, f, _size(f)) for f, sid in zip(files, shard_ids(files), strict=True)]

    def read(self, shard: Shard, batch_rows: int) -> Iterator[pa.RecordBatch]:
        rows = _Rows()
        for sample in self._samples(shard.path):
            rows.samples.append(sample)
            if len(rows.samples) >= batch_rows:
                yield rows.batch()
        if rows.samples:
            yield rows.batch()

    def _samples(self, path: str) -> Iterator[_Sample]:
        p = self.params
        image_exts = {e.lower().lstrip(".") for e in p.image_extensions}
        caption_ext, meta_ext = p.caption_extension.lower().lstrip("."), p.metadata_extension.lower().lstrip(".")
        current: _Sample | None = None
        try:
            with _opened(path) as raw, tarfile.open(path if raw is None else None, mode="r|*", fileobj=raw) as tar:
                for member in tar:
                    if not member.isfile():
                        continue
                    key, ext = split_key(member.name)
                    if current is None or key != current.key:
                        if current is not None:
                            yield _finish(current)
                        current = _Sample(key)
                    data = tar.extractfile(member)
                    payload = data.read() if data is not None else b""
                    if ext in image_exts and current.image is None:
                        current.image = payload
                    elif ext == caption_ext:
                        current.caption = payload.decode("utf-8", "replace")
                    elif ext == meta_ext:
                        current.meta = payload.decode("utf-8", "replace")
        except (tarfile.TarError, EOFError, OSError) as exc:
            broken = current or _Sample(path)
            broken.reason = f"reader:bad_tar: {type(exc).__name__}: {exc}"
            yield broken
            return
        if current is not None:
            yield _finish(current)


def _size(path: str) -> int:
    if not is_remote(path):
        return os.path.getsize(path)
    from mdf.storage import default

    return default().info(path).size


@contextlib.contextmanager
def _opened(path: str) -> Iterator[IO[bytes] | None]:
    """``None`` for a local file (``tarfile`` opens it), else the object streamed by ranged requests through
    :mod:`mdf.storage` (``s3://``, ``https://``...): a tar is read front to back, never downloaded first."""
    if not is_remote(path):
        yield None
        return
    from mdf.storage import default

    with default().open_input(path, size=_size(path)) as f:
        yield f


def _finish(sample: _Sample) -> _Sample:
    if sample.image is None and sample.reason is None:
        sample.reason = "reader:missing_image"
    return sample
