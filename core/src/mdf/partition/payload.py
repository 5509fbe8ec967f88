"""What a row really weighs, and what kind of media it carries, computed from Arrow buffers, not guessed.

The seed estimates a text row as ``characters x 2`` bytes and a media row from fixed per-file guesses; here a
row's payload is the sum of its value buffers: string/binary lengths read from the offsets, fixed widths for
primitives, children summed for lists and structs. Media is recognised by magic bytes in binary columns and
by file extensions in string columns; a path to a local file counts the file's size, since that is what an
operator will load. Everything here is vectorised with ``pyarrow.compute`` and numpy except the ``stat`` of
referenced files, which runs on the sample only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mdf.metrics import REASON
from mdf.partition.rules import Modality

IGNORED_COLUMNS = (REASON, "_raw")  # reader bookkeeping, not payload

# (kind, offset, signature): the file formats a data pipeline meets, by their leading bytes.
_MAGIC: list[tuple[Modality, int, bytes]] = [
    (Modality.IMAGE, 0, b"\xff\xd8\xff"),  # JPEG
    (Modality.IMAGE, 0, b"\x89PNG\r\n\x1a\n"),
    (Modality.IMAGE, 0, b"GIF8"),
    (Modality.IMAGE, 8, b"WEBP"),
    (Modality.IMAGE, 0, b"II*\x00"),  # TIFF, little-endian
    (Modality.IMAGE, 0, b"MM\x00*"),
    (Modality.AUDIO, 8, b"WAVE"),
    (Modality.AUDIO, 0, b"ID3"),  # MP3 with a tag
    (Modality.AUDIO, 0, b"\xff\xfb"),  # MP3 frame
    (Modality.AUDIO, 0, b"fLaC"),
    (Modality.AUDIO, 0, b"OggS"),
    (Modality.AUDIO, 8, b"M4A "),  # checked before the generic ftyp (video) below
    (Modality.VIDEO, 4, b"ftyp"),  # MP4, MOV
    (Modality.VIDEO, 0, b"\x1aE\xdf\xa3"),  # Matroska, WebM
    (Modality.VIDEO, 8, b"AVI "),
]
_EXTENSIONS = {
    Modality.IMAGE: "jpe?g|png|gif|webp|bmp|tiff?",
    Modality.AUDIO: "wav|mp3|flac|ogg|opus|m4a|aac",
    Modality.VIDEO: "mp4|mov|mkv|webm|avi|m4v",
}
_PATH_PATTERN = {kind: rf"(?i)\.({ext})(\?.*)?$" for kind, ext in _EXTENSIONS.items()}
_DATA_URI = {kind: f"data:{kind}/" for kind in _EXTENSIONS}
_ANY_MEDIA_PATH = re.compile(rf"(?i)\.({'|'.join(_EXTENSIONS.values())})$")
MEDIA_SHARE = 0.5  # a column is media when at least half its non-null values look like it


@dataclass
class MediaFiles:
    """Local files referenced by path columns of the sample: how many were found and how many were not."""

    found: int = 0
    missing: int = 0
    remote: int = 0
    examples_missing: list[str] = field(default_factory=list)


def row_payload_bytes(data: pa.Table | pa.RecordBatch) -> np.ndarray:
    """Bytes of each row's values across all columns (validity bits aside), as float64."""
    total = np.zeros(data.num_rows, dtype=np.float64)
    for name, column in zip(data.schema.names, data.columns, strict=True):
        if name not in IGNORED_COLUMNS:
            total += column_row_bytes(column)
    return total


def column_row_bytes(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per-row bytes of one column (chunks concatenated)."""
    if isinstance(column, pa.ChunkedArray):
        parts = [_array_row_bytes(c) for c in column.chunks]
        return np.concatenate(parts) if parts else np.zeros(0)
    return _array_row_bytes(column)


def _array_row_bytes(arr: pa.Array) -> np.ndarray:
    t = arr.type
    n = len(arr)
    if isinstance(t, pa.BaseExtensionType):
        return _array_row_bytes(arr.storage)
    if pa.types.is_dictionary(t):
        values = _array_row_bytes(arr.dictionary)
        idx = pc.fill_null(arr.indices, 0).to_numpy(zero_copy_only=False)
        picked = values[idx] if len(values) else np.zeros(n)
        return picked * _valid(arr) + t.index_type.bit_width / 8
    if _is_binary_like(t):
        lengths = pc.fill_null(pc.binary_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.float64)
        return lengths + _offset_width(t)
    if pa.types.is_fixed_size_binary(t):
        return np.full(n, float(t.byte_width))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        child = _array_row_bytes(pc.list_flatten(arr))
        parents = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
        offsets = 0.0 if pa.types.is_fixed_size_list(t) else _offset_width(t)
        return np.bincount(parents, weights=child, minlength=n).astype(np.float64) + offsets
    if pa.types.is_struct(t):
        total = np.zeros(n)
        for child in arr.flatten():
            total += _array_row_bytes(child)
        return total
    if pa.types.is_null(t):
        return np.zeros(n)
    try:
        return np.full(n, t.bit_width / 8)
    except ValueError:  # maps, unions, views of nested types: an even share of the array's buffers
        return np.full(n, arr.nbytes / n if n else 0.0)


def _is_binary_like(t: pa.DataType) -> bool:
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_string_view(t)
        or pa.types.is_binary_view(t)
    )


def _offset_width(t: pa.DataType) -> float:
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        return 16.0  # a view header per value
    return 8.0 if (pa.types.is_large_string(t) or pa.types.is_large_binary(t) or pa.types.is_large_list(t)) else 4.0


def _valid(arr: pa.Array) -> np.ndarray:
    return pc.is_valid(arr).to_numpy(zero_copy_only=False).astype(np.float64)


def row_text_chars(data: pa.Table | pa.RecordBatch) -> np.ndarray:
    """Characters per row across string columns: the input of the seed's ``chars x 2`` estimate."""
    total = np.zeros(data.num_rows, dtype=np.float64)
    for name, column in zip(data.schema.names, data.columns, strict=True):
        t = column.type
        if name not in IGNORED_COLUMNS and (pa.types.is_string(t) or pa.types.is_large_string(t)):
            total += pc.fill_null(pc.utf8_length(column), 0).to_numpy(zero_copy_only=False)
    return total


def referenced_file_bytes(data: pa.Table | pa.RecordBatch, base_dirs: list[str], files: MediaFiles) -> np.ndarray:
    """Per row, the size of local media files its string values name (0 where none); counts into ``files``.

    A relative path is tried against the working directory, then each of ``base_dirs`` (the folder of the
    Parquet file it came from). URLs cannot be sized without fetching them and are only counted as remote.
    """
    total = np.zeros(data.num_rows, dtype=np.float64)
    for name, column in zip(data.schema.names, data.columns, strict=True):
        values, parents = _flat_strings(column)
        if values is None or name in IGNORED_COLUMNS:
            continue
        looks = pc.fill_null(pc.match_substring_regex(values, _ANY_MEDIA_PATH.pattern), False)
        hits = np.flatnonzero(looks.to_numpy(zero_copy_only=False))
        if not len(hits):
            continue
        sizes = np.zeros(len(values))
        texts = pc.take(values, pa.array(hits)).to_pylist()
        for i, text in zip(hits.tolist(), texts, strict=True):  # the sample only: at most 10,000 rows
            sizes[i] = _file_size(text, base_dirs, files)
        total += np.bincount(parents, weights=sizes, minlength=data.num_rows)
    return total


def _flat_strings(column: pa.Array | pa.ChunkedArray) -> tuple[pa.Array | None, np.ndarray]:
    """String values of a string or list-of-string column, with the row each came from."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    t = arr.type
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        if not (pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)):
            return None, np.zeros(0, dtype=np.int64)
        return pc.list_flatten(arr), pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr, np.arange(len(arr))
    return None, np.zeros(0, dtype=np.int64)


def _file_size(text: str, base_dirs: list[str], files: MediaFiles) -> float:
    if "://" in text and not text.startswith("file://"):
        files.remote += 1
        return 0.0
    path = text.removeprefix("file://")
    for candidate in [path, *(os.path.join(d, path) for d in base_dirs if not os.path.isabs(path))]:
        try:
            size = os.stat(candidate).st_size
        except OSError:
            continue
        files.found += 1
        return float(size)
    files.missing += 1
    if len(files.examples_missing) < 3:
        files.examples_missing.append(path)
    return 0.0


def column_media(column: pa.Array | pa.ChunkedArray) -> tuple[Modality | None, float]:
    """The media kind a column holds (``None`` for plain data) and the share of its values that matched.

    Binary values are matched by magic bytes; strings by media file extension or a ``data:<kind>/`` URI. A
    column is media when at least half its non-null values match one kind; list columns are looked into.
    """
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
        arr = pc.list_flatten(arr)
    t = arr.type
    valid = len(arr) - arr.null_count
    if valid == 0:
        return None, 0.0
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        matches = _magic_matches(arr)
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        matches = {
            kind: pc.sum(
                pc.or_(
                    pc.match_substring_regex(arr, _PATH_PATTERN[kind]),
                    pc.starts_with(arr, _DATA_URI[kind], ignore_case=True),
                )
            ).as_py()
            or 0
            for kind in _EXTENSIONS
        }
    else:
        return None, 0.0
    kind, count = max(matches.items(), key=lambda kv: kv[1])
    share = count / valid
    return (kind, share) if share >= MEDIA_SHARE else (None, share)


def _magic_matches(arr: pa.Array) -> dict[Modality, int]:
    """Values of a binary array whose leading bytes match each kind's signatures (first match wins)."""
    claimed = pa.repeat(False, len(arr))
    counts = {kind: 0 for kind in _EXTENSIONS}
    for kind, offset, signature in _MAGIC:
        head = pc.binary_slice(arr, offset, offset + len(signature))
        hit = pc.and_not(pc.fill_null(pc.equal(head, pa.scalar(signature, arr.type)), False), claimed)
        counts[kind] += pc.sum(hit).as_py() or 0
        claimed = pc.or_(claimed, hit)
    return counts


def detect_modality(data: pa.Table) -> tuple[Modality, dict[str, tuple[str, float]]]:
    """Modality of a sampled table: its media columns' kinds, ``multimodal`` when two or more kinds appear.

    Captions, ids and URLs beside one media column do not make a set multimodal: their bytes are already in
    the row payload and they do not change how much a row grows when decoded. Returns the modality and, per
    media column, its kind and the share of values that matched.
    """
    columns: dict[str, tuple[str, float]] = {}
    for name, column in zip(data.schema.names, data.columns, strict=True):
        if name in IGNORED_COLUMNS:
            continue
        kind, share = column_media(column)
        if kind is not None:
            columns[name] = (str(kind), round(share, 4))
    kinds = {k for k, _ in columns.values()}
    if not kinds:
        return Modality.TEXT, columns
    if len(kinds) > 1:
        return Modality.MULTIMODAL, columns
    return Modality(kinds.pop()), columns
