"""Retries with capped exponential backoff and full jitter, and reads that resume where they broke off.

What is retried is what S3 users see in practice (datatrove issue 302: one ``SlowDown`` killed a whole job):
HTTP 429/500/502/503/504 and the S3 codes behind them (``SlowDown``, ``ServiceUnavailable``, ``InternalError``,
throttling), connection resets and timeouts, and short reads (a body that ends before its length). The SDKs
retry too (pyarrow's AWS SDK, botocore) but with few attempts and, for the AWS SDK, a retry quota that runs dry
under sustained throttling; this layer wraps them with its own budget. Errors are told apart by class name and
message so neither botocore nor aiohttp has to be imported to classify them.

:class:`ResumingReader` turns a random-access object (pyarrow ``NativeFile``) into a raw stream whose every
read is a ranged request that, when cut, is retried from the byte where the data stopped: a 1 GB ``.warc.gz``
streams through a fixed buffer and a reset costs one range request, not the whole object.

After the last try the failure is one :class:`~mdf.storage.errors.StorageError` line naming the object URL.
"""

from __future__ import annotations

import contextlib
import io
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from mdf.storage.errors import ObjectNotFound, StorageError

T = TypeVar("T")

_TRANSIENT_MARKERS = (
    "slowdown", "slow_down", "service_unavailable", "serviceunavailable", "internal_failure", "internalerror",
    "throttl", "request_timeout", "requesttimeout", "network_connection", "curlcode", "connection reset",
    "connection aborted", "connection was closed", "broken pipe", "timed out", "timeout", "http status 5",
    "http status 429", "status code: 5", "(503)", "(500)", "(502)", "(504)", "(429)", "incompleteread",
    "incomplete read", "server disconnected", "payload", "short read", "remote end closed", "reset by peer",
    "premature end", "unexpected eof", "transfer closed",
)  # fmt: skip
_TRANSIENT_CLASSES = frozenset(
    {
        "ConnectionError", "ConnectionResetError", "ConnectionAbortedError", "BrokenPipeError", "TimeoutError",
        "IncompleteRead", "IncompleteReadError", "ResponseStreamingError", "EndpointConnectionError",
        "ConnectionClosedError", "ReadTimeoutError", "ConnectTimeoutError", "ClientPayloadError",
        "ServerDisconnectedError", "ClientOSError", "ShortRead", "ProtocolError",
    }
)  # fmt: skip
_TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})
_CONNECTION_MARKERS = (
    "network_connection", "could not connect", "couldn't connect", "cannot connect", "connection refused",
    "could not resolve host", "couldn't resolve host", "name or service not known", "failed to connect",
)  # fmt: skip
_NOT_FOUND_MARKERS = ("nosuchkey", "no_such_key", "nosuchbucket", "no_such_bucket", "pathdoesnotexist")


class ShortRead(OSError):
    """A response body ended before the length asked for (a cut connection the client did not notice)."""


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` tries in all; before try ``k`` (from 1) sleep ``uniform(0, min(cap_s, base_s * 2**k))``.

    Full jitter (AWS architecture blog, "Exponential Backoff And Jitter"): clients that failed together do not
    come back together, which is what throttling needs."""

    attempts: int = 8
    base_s: float = 0.1
    cap_s: float = 5.0

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        return (rng or random).uniform(0.0, min(self.cap_s, self.base_s * (2**attempt)))


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an SDK error carries (botocore ``response``, aiohttp ``status``), if any."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if isinstance(status, int):
            return status
    status = getattr(exc, "status", None) or getattr(exc, "code", None)
    return status if isinstance(status, int) else None


def error_code(exc: BaseException) -> str:
    """botocore's error code (``NoSuchUpload``, ``PreconditionFailed``...), ``""`` for any other error."""
    response = getattr(exc, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


def _chain(exc: BaseException) -> list[BaseException]:
    out, seen = [], set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def is_transient(exc: BaseException) -> bool:
    """True when trying the same request again may succeed (throttling, 5xx, resets, timeouts, short reads)."""
    for e in _chain(exc):
        if isinstance(e, FileNotFoundError | PermissionError | ObjectNotFound):
            return False
        if type(e).__name__ in _TRANSIENT_CLASSES or isinstance(e, ConnectionError | TimeoutError):
            return True
        status = status_of(e)
        text = str(e).lower()
        if status is not None:  # 409 ConditionalRequestConflict: two conditional writes raced; try again
            return status in _TRANSIENT_STATUS or "conditionalrequestconflict" in text
        if any(m in text for m in _TRANSIENT_MARKERS):
            return True
    return False


def is_connection_failure(text: str) -> bool:
    """Whether an error's text says the server was not reached at all (refused, no such host), as opposed to a
    server that answered with an error."""
    low = text.lower()
    return any(m in low for m in _CONNECTION_MARKERS)


def is_not_found(exc: BaseException) -> bool:
    for e in _chain(exc):
        if isinstance(e, FileNotFoundError | ObjectNotFound) or status_of(e) == 404:
            return True
        if any(m in str(e).lower().replace(" ", "") for m in _NOT_FOUND_MARKERS):
            return True
    return False


def reason(exc: BaseException) -> str:
    """The first line of an SDK error, which is what a user needs (SDK messages carry no credentials)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) < 300 else text[:297] + "..."


def call(
    fn: Callable[[], T],
    url: str,
    what: str,
    policy: RetryPolicy,
    on_retry: Callable[[BaseException], None] | None = None,
    inspect: Callable[[BaseException], None] | None = None,
) -> T:
    """Run ``fn`` with retries on transient failures; the final failure is one line naming ``url``.

    :param inspect: sees every exception first and may raise its own (e.g. a lock's 412 is an answer, not an
        error to retry)."""
    for attempt in range(1, policy.attempts + 1):
        try:
            return fn()
        except StorageError:
            raise
        except Exception as exc:
            if inspect is not None:
                inspect(exc)
            if is_not_found(exc) and not is_transient(exc):
                raise ObjectNotFound(url, f"{what}: not found ({reason(exc)})") from None
            if not is_transient(exc):
                raise StorageError(url, f"{what} failed: {reason(exc)}") from None
            if attempt == policy.attempts:
                raise StorageError(url, f"{what} failed after {attempt} tries: {reason(exc)}") from None
            if on_retry is not None:
                on_retry(exc)
            time.sleep(policy.delay(attempt))
    raise AssertionError("unreachable")


class ResumingReader(io.RawIOBase):
    """A seekable raw stream over ``open_file()`` (a pyarrow random-access file) of known ``size``.

    Each :meth:`readinto` is one ranged read; a transient failure or a short body is retried, asking for the
    rest from the first missing byte. Wrap in :class:`io.BufferedReader` for streaming or in
    :class:`pyarrow.PythonFile` for Parquet.

    :param prefetch: for sequential streams: reads go by ``block``-sized chunks and the next chunk is fetched
        on a background thread while the caller works on this one (two blocks in memory at most), so the
        network time overlaps the parsing instead of adding to it."""

    def __init__(
        self,
        url: str,
        open_file: Callable[[], Any],
        size: int,
        policy: RetryPolicy,
        block: int = 8 << 20,
        prefetch: bool = False,
    ) -> None:
        super().__init__()
        self.url, self._open_file, self.size, self.policy, self.block = url, open_file, size, policy, block
        self._file: Any = None
        self._open_lock = threading.Lock()
        self._pos = 0
        self.retries = 0  # how many reads were retried (for tests and logs)
        self.prefetch = prefetch
        self._chunk: tuple[int, bytes] | None = None
        self._ahead: tuple[int, Future[bytes]] | None = None
        self._pool: ThreadPoolExecutor | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self.size - self._pos)
        if want <= 0:
            return 0
        if self.prefetch:
            start, chunk = self._chunk_at(self._pos)
            off = self._pos - start
            n = min(want, len(chunk) - off)
            view[:n] = memoryview(chunk)[off : off + n]  # a memoryview slice: no copy before the one into view
            self._pos += n
            return n
        got = 0
        while got < want:
            piece = self._read_at(self._pos + got, want - got)
            view[got : got + len(piece)] = piece
            got += len(piece)
        self._pos += got
        return got

    def _chunk_at(self, pos: int) -> tuple[int, bytes]:
        """The block holding ``pos``: the current one, the prefetched one, or fetched now; then the next is
        started in the background."""
        if self._chunk is not None and self._chunk[0] <= pos < self._chunk[0] + len(self._chunk[1]):
            return self._chunk
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == pos:
            self._chunk = (pos, ahead[1].result())  # a failure was retried there; its final error raises here
        else:
            if ahead is not None:
                ahead[1].cancel()
            self._chunk = (pos, self._fetch(pos))
        nxt = pos + len(self._chunk[1])
        if nxt < self.size:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="mdf-prefetch")
            self._ahead = (nxt, self._pool.submit(self._fetch, nxt))
        return self._chunk

    def _fetch(self, pos: int) -> bytes:
        n = min(self.block, self.size - pos)
        first = self._read_at(pos, n)
        if len(first) == n:  # the usual case: the whole block in one response, kept without a copy
            return first
        out = bytearray(first)
        while len(out) < n:
            out += self._read_at(pos + len(out), n - len(out))
        return bytes(out)

    def _read_at(self, offset: int, n: int) -> bytes:
        def attempt() -> bytes:
            with self._open_lock:  # the prefetch thread and the caller may both read (read_at is thread-safe)
                if self._file is None:
                    self._file = self._open_file()
            data = self._file.read_at(n, offset)
            if not data:  # nothing at all where the object's size says there are bytes: a cut body
                raise ShortRead(f"short read: 0 of {n} bytes at offset {offset}")
            return (
                data if isinstance(data, bytes) else bytes(data)
            )  # a shorter piece is kept; the caller asks for the rest

        def count(exc: BaseException) -> None:
            self.retries += 1  # the file is kept: each read_at is its own request, nothing of the last one stays

        return call(attempt, self.url, f"read at byte {offset}", self.policy, on_retry=count)

    def readall(self) -> bytes:
        """The rest of the object in ``block``-sized ranged reads (io's default would ask 8 KiB at a time)."""
        out = bytearray()
        while self._pos < self.size:
            piece = bytearray(min(self.block, self.size - self._pos))
            out += piece[: self.readinto(piece)]
        return bytes(out)

    def _drop(self) -> None:
        if self._file is not None:
            with contextlib.suppress(Exception):  # a broken connection may fail to close: dropped anyway
                self._file.close()
            self._file = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._chunk = self._ahead = None
        self._drop()
        super().close()
