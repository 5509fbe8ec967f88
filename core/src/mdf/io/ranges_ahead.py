"""A remote Parquet file read with the next column chunks already on their way: the network wait behind the decode.

The Parquet reader reads a remote file by ranged GETs, one per 8 MiB of each selected column chunk, each asked
for only when Arrow's decoder needs it, so every GET's round trip and transfer added to the run (W1 s3 -> s3 on
SeaweedFS here: the reading threads sat 5.9-6.1 s in 105 GETs of a 16-17 s run; ``benchmarks/peers/s3_wait.py``).
Once the footer is read, :func:`mdf.io.parquet` gives this stream the plan: the byte ranges of the shard's row
groups' selected column chunks, in file order. Each range (cut at ``block``) is fetched whole, and the next
``depth`` ones are fetched on a background thread while the decoder works on this one; a piece fully read is
dropped, so memory is at most ``depth + 6`` pieces a file (8 MiB each), where Arrow's buffered column readers
held 8 MiB a column. A read outside the plan (the footer, a writer's padding) goes to the store as before, and a
wrong plan costs GETs, never bytes: what is returned is always the file's.

The ranged GETs themselves (retries, resuming a cut body) are :class:`mdf.storage.retry.ResumingReader`'s.
"""

from __future__ import annotations

import bisect
import io
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pyarrow as pa

BLOCK = 8 << 20  # one GET at most per piece: the Arrow buffer the reader used per column chunk


def open_remote(url: str, size: int) -> tuple[pa.NativeFile, RangesAhead]:
    """A random-access file for pyarrow over ``url`` (``size`` bytes), and its stream to give the plan to."""
    from mdf.storage import default
    from mdf.storage.retry import ResumingReader

    store = default()
    fs, path = store.resolve(url)
    raw = ResumingReader(url, lambda: fs.open_input_file(path), size, store.policy)
    ahead = RangesAhead(raw, size)
    return pa.PythonFile(ahead, mode="r"), ahead


class RangesAhead(io.RawIOBase):
    """A seekable raw stream over ``raw`` (seek + readinto, one ranged GET each) that fetches a plan ahead."""

    def __init__(self, raw: Any, size: int, block: int = BLOCK, depth: int = 2) -> None:
        super().__init__()
        self.raw, self.size, self.block, self.depth = raw, size, block, depth
        # pieces held at most: Arrow reads a group's columns on several threads at once, so the pieces being read
        # are one a column (3 in W1), and evicting one of them refetched it (W1 s3: 291 MB read for 238 MB)
        self.hold = depth + 6
        self._pos = 0
        self._pieces: list[tuple[int, int]] = []
        self._starts: list[int] = []
        self._have: dict[int, list[Any]] = {}  # piece -> [bytes, bytes read of it]
        self._ahead: dict[int, Future[bytearray]] = {}
        self._lock = threading.Lock()  # the raw stream has one position: one GET at a time
        self._pool: ThreadPoolExecutor | None = None
        self.gets_ahead = 0  # pieces fetched on the background thread (for tests and profiles)

    def plan(self, ranges: Sequence[tuple[int, int]]) -> None:
        """The ``(offset, length)`` ranges the caller will read, in order; cut at ``block``."""
        pieces = []
        for offset, length in sorted(ranges):
            end = min(offset + length, self.size)
            offset = max(offset, pieces[-1][1] if pieces else 0)  # overlapping ranges: each byte in one piece
            while offset < end:
                pieces.append((offset, min(end, offset + self.block)))
                offset = pieces[-1][1]
        self._pieces, self._starts = pieces, [s for s, _ in pieces]

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_CUR:
            offset += self._pos
        elif whence == io.SEEK_END:
            offset += self.size
        self._pos = max(0, offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want, got = min(len(view), self.size - self._pos), 0
        while got < want:
            pos = self._pos + got
            i = bisect.bisect_right(self._starts, pos) - 1
            if i >= 0 and pos < self._pieces[i][1]:
                entry = self._piece(i)
                off = pos - self._pieces[i][0]
                n = min(want - got, len(entry[0]) - off)
                view[got : got + n] = memoryview(entry[0])[off : off + n]
                entry[1] += n
                if entry[1] >= len(entry[0]):  # read through: Arrow reads each byte of a chunk once
                    del self._have[i]
            else:  # outside the plan: straight from the store, up to where the plan starts again
                stop = self._starts[i + 1] if i + 1 < len(self._starts) else self.size
                piece = self._get(pos, min(want - got, stop - pos))
                n = len(piece)
                view[got : got + n] = piece
            got += n
        self._pos += got
        return got

    def _piece(self, i: int) -> list[Any]:
        """Piece ``i``'s bytes (fetched ahead, or now), and the next ``depth`` pieces started."""
        entry = self._have.get(i)
        if entry is None:
            future = self._ahead.pop(i, None)
            start, end = self._pieces[i]
            data = future.result() if future is not None else self._get(start, end - start)
            entry = self._have[i] = [data, 0]
            while len(self._have) > self.hold:  # pieces left half-read (a damaged group): oldest out
                del self._have[min(self._have)]
        for j in range(i + 1, min(i + 1 + self.depth, len(self._pieces))):
            if j not in self._ahead and j not in self._have:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(1, thread_name_prefix="mdf-parquet-ahead")
                self._ahead[j] = self._pool.submit(self._get_ahead, *self._pieces[j])
        # far behind: not wanted any more (nearer ones are: Arrow's column threads ask out of file order, and
        # dropping a piece in flight made it fetched twice)
        for j in [j for j in self._ahead if j < i - self.hold]:
            self._ahead.pop(j).cancel()
        return entry

    def _get_ahead(self, start: int, end: int) -> bytearray:
        self.gets_ahead += 1
        return self._get(start, end - start)

    def _get(self, pos: int, n: int) -> bytearray:
        """``n`` bytes at ``pos`` (fewer only at the end of the object), read into one buffer: no copy after."""
        out = bytearray(n)
        with self._lock:
            self.raw.seek(pos)
            got = 0
            while got < n and (k := self.raw.readinto(memoryview(out)[got:])):
                got += k
        return out if got == n else out[:got]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._have.clear()
        self._ahead.clear()
        self.raw.close()
        super().close()
