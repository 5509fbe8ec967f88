"""``image_folder`` reader: every image file under one or more folders, one row per file.

A big folder is cut into shards of consecutive files (in sorted path order) closed at ``files_per_shard`` files
or ``bytes_per_shard`` bytes, whichever comes first, so many loaders share one folder and a shard's size stays
bounded whatever the image sizes. A shard names its files by position in that order, so each loader lists the
folder once and checks that the position still holds the shard's first file: a folder that changed after the
run was planned (the shard's first file moved, or its byte total changed) is reported rather than read wrongly.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
from pydantic import Field

from mdf import REASON, InputError, Params, Reader, RecipeError, Shard, glob_files
from mdf.storage import has_wildcard, is_remote, literal_prefix
from mdf_image.io import sample_data_hint

IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "webp", "gif")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
SCHEMA = pa.schema([("id", pa.string()), ("path", pa.string()), ("image", pa.large_binary())])


class ImageFolderReader(Reader):
    """Reads image files under folders (recursive, sorted); columns id (relative path), path, image bytes."""

    name = "image_folder"
    modality = "image"

    class Params(Params):
        paths: list[str] = Field(
            min_length=1, description="folders (searched recursively) or globs of image files; or their URLs"
        )
        extensions: list[str] = Field(
            list(IMAGE_EXTENSIONS), min_length=1, description="file extensions read (any case, no dot)"
        )
        files_per_shard: int = Field(1000, ge=1, description="files in one shard, at most")
        bytes_per_shard: int = Field(256 << 20, ge=1, description="bytes of image files in one shard, at most")
        bytes_per_batch: int = Field(
            16 << 20, ge=1, description="bytes of image files in one batch, at most (and the run's batch_rows)"
        )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._listing: tuple[str, list[tuple[str, int]]] | None = None

    def shards(self) -> list[Shard]:
        root, files = self._files()
        prefix = _UNSAFE.sub("_", os.path.basename(root)) or "images"
        cuts = _cuts(files, 0, len(files), self.params.files_per_shard, self.params.bytes_per_shard)
        return [self._shard(prefix, k, files, lo, hi, size) for k, (lo, hi, size) in enumerate(cuts)]  # _list: >= 1

    @staticmethod
    def _shard(prefix: str, k: int, files: list[tuple[str, int]], start: int, stop: int, size: int) -> Shard:
        return Shard(f"{prefix}-{k:05d}", files[start][0], size, start, stop, rows=stop - start)

    def read(self, shard: Shard, batch_rows: int) -> Iterator[pa.RecordBatch]:
        root, files = self._files()
        start, stop = shard.start or 0, shard.stop if shard.stop is not None else len(files)
        # the first file and the byte total pin the shard: a file added, removed or rewritten in it changes them
        same = stop <= len(files) and files[start][0] == shard.path
        if not same or sum(nbytes for _, nbytes in files[start:stop]) != shard.size:
            raise InputError(
                f"image folder {root} changed after the run was planned: shard '{shard.id}' (files #{start} to "
                f"#{stop - 1}, from {shard.path}) no longer holds the same files; re-run on a folder that does not "
                "change meanwhile"
            )
        # batches cut by bytes too: a shard of 1,000 photographs (~50 MB) as one batch is read whole before its
        # first image is hashed, and both cores wait on the reads (pHash of 2,000 JPEGs, whole process: 1.66-1.70 s
        # with ~13 MB batches against 1.78-2.04 s with one batch a shard)
        for lo, hi, _ in _cuts(files, start, stop, batch_rows, self.params.bytes_per_batch):
            yield _read_files(root, [path for path, _ in files[lo:hi]])

    def _files(self) -> tuple[str, list[tuple[str, int]]]:
        """The root folder and every matching ``(absolute path, bytes)``, sorted; listed once per reader."""
        if self._listing is None:
            with sample_data_hint():
                self._listing = self._list()
        return self._listing

    def _list(self) -> tuple[str, list[tuple[str, int]]]:
        exts = tuple("." + e.lower().lstrip(".") for e in self.params.extensions)
        found: dict[str, int] = {}
        roots = []
        remote = [is_remote(p) for p in self.params.paths]
        if any(remote) and not all(remote):
            raise RecipeError(
                "image_folder paths mix local folders and URLs; give one kind (ids are made relative to one root)",
                "reader.paths",
            )
        for i, pattern in enumerate(self.params.paths):
            p = os.path.abspath(os.path.expanduser(pattern)) if not remote[i] else pattern
            if remote[i]:
                roots.append(_url_root(pattern, exts))
                matched = _list_url(pattern, exts, f"reader.paths[{i}]")
            elif os.path.isdir(p):
                roots.append(p)
                matched = _walk(p, exts)
            else:
                roots.append(_glob_root(p))
                matched = {f: os.path.getsize(f) for f in glob_files(p) if f.lower().endswith(exts)}  # loops end
            if not matched:
                raise RecipeError(
                    f"no image file ({', '.join(exts)}) under {pattern!r} (cwd {os.getcwd()}); fix the path "
                    "or the extensions",
                    f"reader.paths[{i}]",
                )
            found.update(matched)
        root = os.path.commonpath(roots) if not any(remote) else _common_url(roots)
        return root, sorted(found.items())


def _walk(folder: str, exts: tuple[str, ...]) -> dict[str, int]:
    """Files under ``folder`` with one of ``exts``; hidden files and folders (``.name``) are skipped."""
    out: dict[str, int] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not name.startswith(".") and name.lower().endswith(exts):
                path = os.path.join(dirpath, name)
                try:
                    out[path] = os.path.getsize(path)
                except OSError:  # a dangling link or a file gone meanwhile: nothing to read
                    continue
    return out


def _list_url(pattern: str, exts: tuple[str, ...], where: str) -> dict[str, int]:
    """Objects under a folder URL or matching a URL glob (one listing, sizes included)."""
    from mdf.storage import StorageError, default

    try:
        objs = default().expand([pattern], where.split("[")[0], exts)
    except StorageError as exc:
        raise RecipeError(f"cannot list {pattern!r}: {exc}; fix the URL or glob", where) from None
    return {o.url: o.size for o in objs if o.url.lower().endswith(exts)}


def _url_root(pattern: str, exts: tuple[str, ...]) -> str:
    """A URL glob's folder before its first wildcard, a single image's folder, or the folder URL itself."""
    if has_wildcard(pattern):
        return literal_prefix(pattern).rstrip("/")
    url = pattern.rstrip("/")
    return url.rsplit("/", 1)[0] if url.lower().endswith(exts) else url


def _common_url(roots: list[str]) -> str:
    """The longest folder URL the roots share, compared segment by segment."""
    common: list[str] = []
    for segments in zip(*(r.split("/") for r in roots), strict=False):
        if len(set(segments)) != 1:
            break
        common.append(segments[0])
    return "/".join(common)


def _glob_root(pattern: str) -> str:
    """The folder part of a glob before its first wildcard: what ids are made relative to."""
    parts = pattern.split(os.sep)
    first_magic = next((i for i, s in enumerate(parts) if glob.has_magic(s)), len(parts))
    root = os.sep.join(parts[:first_magic]) or os.sep
    return root if os.path.isdir(root) else os.path.dirname(root)


def _cuts(
    files: list[tuple[str, int]], start: int, stop: int, most: int, most_bytes: int
) -> list[tuple[int, int, int]]:
    """``files[start:stop]`` cut into ``(lo, hi, bytes)`` runs of at most ``most`` files and ``most_bytes`` bytes
    (a bigger file alone); none when the range is empty."""
    out = []
    lo, size = start, 0
    for i in range(start, stop):
        nbytes = files[i][1]
        if i > lo and (i - lo >= most or size + nbytes > most_bytes):
            out.append((lo, i, size))
            lo, size = i, 0
        size += nbytes
    if stop > lo:
        out.append((lo, stop, size))
    return out


def _local(path: str) -> tuple[bytes | None, str | None]:
    try:
        with open(path, "rb") as f:
            return f.read(), None
    except OSError as exc:
        return None, f"reader:unreadable_file: {exc.strerror or exc}"


def _fetched(urls: list[str]) -> list[tuple[bytes | None, str | None]]:
    """Objects read whole, 16 requests at a time (one image is one small GET; done one by one, the round trips
    would be the whole cost), in order; one that cannot be read is a reason, not a failed batch."""
    from mdf.storage import StorageError, default

    storage = default()

    def one(url: str) -> tuple[bytes | None, str | None]:
        try:
            return storage.read_bytes(url), None
        except (StorageError, OSError) as exc:
            return None, f"reader:unreadable_file: {exc}"

    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(one, urls))


def _read_files(root: str, paths: list[str]) -> pa.RecordBatch:
    """One batch of files; a file that cannot be read becomes a row with a null image and a reason."""
    images: list[bytes | None] = []
    reasons: list[str | None] = []
    for data, reason in _fetched(paths) if paths and is_remote(paths[0]) else map(_local, paths):
        images.append(data)
        reasons.append(reason)
    ids = [p[len(root) + 1 :] if is_remote(p) else os.path.relpath(p, root) for p in paths]
    batch = pa.RecordBatch.from_arrays(
        [pa.array(ids, pa.string()), pa.array(paths, pa.string()), pa.array(images, pa.large_binary())], schema=SCHEMA
    )
    if any(r is not None for r in reasons):
        batch = batch.append_column(REASON, pa.array(reasons, pa.string()))
    return batch
