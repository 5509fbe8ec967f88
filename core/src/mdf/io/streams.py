"""Compressed input streams that notice damage, and line samples across a file.

Python's ``gzip`` raises ``EOFError`` or ``zlib.error`` on a cut or corrupt stream; ``zstandard``'s stream
reader simply stops at a frame cut in half, which is how a truncated ``.jsonl.zst`` used to read as a short,
"balanced" file. Here every way a compressed stream can fail becomes one :class:`DamagedStream` carrying the
byte offset in the compressed file and the library's message, which the reader turns into a
``reader:damaged_input`` row (:func:`mdf.io.base.damaged_input_batch`) after the rows it could read.

A URL (``s3://``, ``https://``, ...) is read through :meth:`mdf.storage.Storage.open_input`: streamed in ranged
blocks (bounded memory, never downloaded first), resumed where a connection breaks, so the same damage checks
run on the remote bytes.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import zlib
from collections.abc import Iterator
from typing import IO, Any

from mdf.io.sharding import file_size
from mdf.storage.urls import is_remote

COMPRESSED = (".gz", ".zst", ".zstd")
_CHUNK = 1 << 14  # compressed bytes fed at once: how close a damage offset is, how little a bad block costs


class DamagedStream(Exception):
    """A compressed stream ends early or holds a bad frame at ``offset`` (bytes into the file, or ``None``)."""

    def __init__(self, offset: int | None, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


def compression_of(path: str) -> str:
    return "gz" if path.endswith(".gz") else "zst" if path.endswith((".zst", ".zstd")) else "none"


def open_raw(path: str) -> IO[bytes]:
    """The file's bytes: a local file, or a streamed, seekable reader of a remote object (its size from the
    listing where this process made it: no HEAD request)."""
    if is_remote(path):
        from mdf.storage import default  # the S3 layer, imported for URLs only

        return default().open_input(path, size=file_size(path))
    return open(path, "rb")


def open_stream(path: str, mode: str = "rb", compression: str | None = None) -> IO[bytes]:
    """Open a plain, gzip or zstd file as a binary stream; ``compression`` defaults to the file's extension.

    Read streams of compressed files raise :class:`DamagedStream` from ``read`` when the file is damaged."""
    compression = compression or compression_of(path)
    if "r" in mode and compression != "none":
        return _Checked(path, compression)  # type: ignore[return-value]
    if "r" in mode:
        return open_raw(path)
    if compression == "gz":
        return gzip.open(path, mode)  # type: ignore[return-value]
    if compression == "zst":
        import zstandard

        raw = open(path, mode)  # noqa: SIM115 - the returned stream owns it
        return zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=True)  # type: ignore[return-value]
    return open(path, mode)


class _Checked:
    """``read(n)`` over a gzip or zstd file that raises :class:`DamagedStream` instead of ending short."""

    def __init__(self, path: str, compression: str) -> None:
        self.raw = open_raw(path)
        self.compression = compression
        self._gz = gzip.GzipFile(fileobj=self.raw, mode="rb") if compression == "gz" else None
        self._buf = bytearray()
        self._dobj: Any = None
        self._in_frame = False
        self._done = False
        self._damage: DamagedStream | None = None  # raised once the data decoded before it is handed out

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes; everything decodable before damage is returned first, the next call raises."""
        while (n < 0 or len(self._buf) < n) and not self._done and self._damage is None:
            try:
                self._feed()
            except DamagedStream as exc:
                self._damage = exc
        if not self._buf and self._damage is not None:
            raise self._damage
        size = len(self._buf) if n < 0 else min(n, len(self._buf))
        out = bytes(self._buf[:size])
        del self._buf[:size]
        return out

    def _feed(self) -> None:
        if self._gz is not None:
            try:  # read1: one decompress call, so nothing decoded is lost when the next one fails
                piece = self._gz.read1(_CHUNK)
            except (EOFError, OSError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
                raise DamagedStream(self.raw.tell(), f"gzip: {type(exc).__name__}: {exc}") from exc
            self._buf += piece
            self._done = not piece
            return
        self._feed_zstd()

    def _feed_zstd(self) -> None:
        import zstandard

        start = self.raw.tell()
        data = self.raw.read(_CHUNK)
        if not data:
            if self._in_frame:
                raise DamagedStream(start, "zstd: file ends inside a frame (truncated)")
            self._done = True
            return
        try:
            while data:
                if self._dobj is None:
                    self._dobj = zstandard.ZstdDecompressor().decompressobj()
                self._in_frame = True
                self._buf += self._dobj.decompress(data)
                if not self._dobj.eof:
                    return
                data = self._dobj.unused_data  # the next frame of a multi-frame file starts here
                self._dobj, self._in_frame = None, False
        except zstandard.ZstdError as exc:
            raise DamagedStream(start, f"zstd: {exc}") from exc

    def close(self) -> None:
        if self._gz is not None:
            self._gz.close()
        self.raw.close()

    def __enter__(self) -> _Checked:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sample_lines(path: str, points: int = 16, lines_per_point: int = 64, head_bytes: int = 4 << 20) -> list[bytes]:
    """Lines from across a file: ``points`` evenly spaced places of a plain file (``lines_per_point`` whole
    lines at each), or the first ``head_bytes`` of a compressed one (which cannot be entered mid-stream).
    A damaged stream yields the lines before the damage; reading it reports the damage itself. A remote file is
    sampled at its head too: each seek there would cost a ranged request of a whole stream block."""
    out: list[bytes] = []
    if path.endswith(COMPRESSED) or is_remote(path):
        data = bytearray()
        with open_stream(path) as f, contextlib.suppress(DamagedStream):
            while len(data) < head_bytes:
                piece = f.read(min(1 << 20, head_bytes - len(data)))
                if not piece:
                    break
                data += piece
        return bytes(data).split(b"\n")[:-1]  # the last piece may be a cut line
    size = os.path.getsize(path)
    seen: set[int] = set()  # line start offsets: in a small file the sample points overlap; count a line once
    with open(path, "rb") as f:
        for k in range(points):
            f.seek(size * k // points)
            if k:
                f.readline()  # finish the line the seek landed in
            out.extend(_take_lines(f, lines_per_point, seen))
    return out


def _take_lines(f: IO[bytes], n: int, seen: set[int]) -> Iterator[bytes]:
    for _ in range(n):
        at = f.tell()
        line = f.readline()
        if not line or at in seen:
            return
        seen.add(at)
        yield line
