"""One file-system layer for every path a recipe names: local, ``s3://``, ``https://`` and any fsspec protocol.

``s3://`` goes to :class:`pyarrow.fs.S3FileSystem` (the AWS C++ SDK): measured on SeaweedFS over loopback
(``benchmarks/bench_s3.py --mb 100 --objects 500``, best of 3, load ~15 on 2 cores) s3fs 2026.9 ran at 0.11x
pyarrow's speed listing 500 objects, 0.84x streaming 100 MB, 0.57x reading a 109 MB Parquet file and 0.62x
writing 100 MB; pyarrow is already a dependency (s3fs brings aiobotocore, aiohttp and a pinned botocore).
Everything else goes through fsspec wrapped in :class:`pyarrow.fs.PyFileSystem`, so ``https://``
(ranged reads, read only), ``gs://``, ``az://`` and ``hf://`` work wherever their package is installed, behind
the same interface. Plain paths and ``file://`` are pyarrow's local file system.

Every call here is retried on transient failures (:mod:`mdf.storage.retry`) and fails as one line naming the
URL. Reads resume at the byte where a connection broke; a write is retried whole (an S3 PUT or a completed
multipart upload makes the object appear whole or not at all, which is the atomicity object stores offer).
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from mdf.errors import MissingDependencyError
from mdf.storage import urls
from mdf.storage.config import StorageSettings
from mdf.storage.errors import ObjectNotFound, StorageError
from mdf.storage.listing import answers, check_keys
from mdf.storage.retry import ResumingReader, RetryPolicy, call

STREAM_BLOCK = 8 << 20  # one ranged GET per block when streaming: the memory a stream holds
_EXTRAS = {"gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs", "hf": "huggingface_hub",
           "http": "aiohttp", "https": "aiohttp"}  # fmt: skip


@dataclass(frozen=True)
class ObjectInfo:
    """A file or object: its URL as the user would write it, its size, and its mtime (``None`` if unknown)."""

    url: str
    size: int
    mtime_ns: int | None = None


class Storage:
    """File systems for one set of settings (the recipe's ``storage:`` block), created once and reused.

    Safe to share between threads; picklable settings make it easy to rebuild on a Ray worker."""

    def __init__(self, settings: StorageSettings | None = None) -> None:
        self.settings = settings or StorageSettings()
        self.policy = RetryPolicy(attempts=self.settings.s3.max_attempts)
        self._fs: dict[str, pafs.FileSystem] = {}
        self._lock = threading.Lock()
        self._client: Any = None  # botocore's S3 client: the lock's conditional PUTs and batched deletes
        self._client_lock = threading.Lock()  # not _lock: making the client must not hold up resolve()

    def __reduce__(self) -> tuple[type[Storage], tuple[StorageSettings]]:
        """Pickled as its settings (file systems and locks are rebuilt): a Ray task or actor can take one."""
        return (Storage, (self.settings,))

    # -- resolution -------------------------------------------------------------------------------------------
    def resolve(self, url: str) -> tuple[pafs.FileSystem, str]:
        """``(file system, path in it)`` for ``url``."""
        scheme = urls.scheme_of(url)
        with self._lock:
            fs = self._fs.get(scheme)
            if fs is None:
                fs = self._fs[scheme] = self._make(scheme, url)
        path = url if scheme in urls.READ_ONLY else urls.strip_scheme(url)
        return fs, path

    def _make(self, scheme: str, url: str) -> pafs.FileSystem:
        if scheme == "file":
            return pafs.LocalFileSystem()
        if scheme in ("s3", "s3a"):
            return s3_filesystem(self.settings)
        try:
            import fsspec

            return pafs.PyFileSystem(pafs.FSSpecHandler(fsspec.filesystem(scheme)))
        except ImportError as exc:
            package = "fsspec" if "fsspec" in str(exc) and "fsspec" not in _EXTRAS.get(scheme, "") else None
            package = package or _EXTRAS.get(scheme, "fsspec")
            raise MissingDependencyError(f"{url}: reading {scheme}:// needs {package}: pip install {package}") from None
        except ValueError as exc:  # fsspec: "Protocol not known"
            raise StorageError(url, f"unknown protocol {scheme}:// ({exc})") from None

    def s3_client(self) -> Any:
        """botocore's S3 client for these settings (:func:`mdf.storage.s3client.s3_client`), made once: importing
        botocore and building a client costs 0.3-1 s here, which one run pays once, for its lock and deletes."""
        with self._client_lock:
            if self._client is None:
                from mdf.storage.s3client import s3_client

                self._client = s3_client(self.settings)
            return self._client

    def _url(self, scheme: str, path: str) -> str:
        return path if scheme in urls.READ_ONLY else urls.with_scheme(scheme, path)

    def endpoint_of(self, url: str) -> str:
        """The server ``url`` is asked from, for messages: ``the S3 endpoint http://h:9000 (AWS_ENDPOINT_URL_S3)``,
        ``host:port`` of an ``https://`` URL."""
        scheme = urls.scheme_of(url)
        if scheme in ("s3", "s3a"):
            s3 = self.settings.s3
            return f"the S3 endpoint {s3.resolved_endpoint() or 's3.amazonaws.com'} ({s3.endpoint_source()})"
        parts = urlsplit(url)
        return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname or url)

    # -- metadata ---------------------------------------------------------------------------------------------
    def _stat(self, url: str) -> pafs.FileInfo:
        """``get_file_info``, retried. fsspec answers a host that does not answer (refused, no such name) with
        ``FileNotFoundError`` as it answers a 404, and pyarrow turns both into ``NotFound``; a not-found URL of
        ``http(s)://`` is asked again here so a connection failure is reported as one, naming the host."""
        fs, path = self.resolve(url)
        got = call(lambda: fs.get_file_info(path), url, "stat", self.policy)
        if got.type == pafs.FileType.NotFound and urls.scheme_of(url) in urls.READ_ONLY:
            call(lambda: answers(fs, url, self.endpoint_of(url)), url, "stat", self.policy)
        return got

    def info(self, url: str) -> ObjectInfo:
        """Size and mtime of one object; :class:`ObjectNotFound` (exit 2) when it is missing or a folder."""
        got = self._stat(url)
        if got.type != pafs.FileType.File:
            raise ObjectNotFound(
                url, "no such object" + (" (it is a folder)" if got.type == pafs.FileType.Directory else "")
            )
        return ObjectInfo(url, got.size, got.mtime_ns)

    def exists(self, url: str) -> bool:
        return self._stat(url).type != pafs.FileType.NotFound

    def list(self, prefix: str, hidden: bool = False) -> list[ObjectInfo]:
        """Every object under ``prefix`` (a folder), sorted by URL; names under ``_``/``.`` parts only if
        ``hidden`` (dataset readers skip them: ``_mdf/``, staging prefixes)."""
        scheme = urls.scheme_of(prefix)
        fs, path = self.resolve(prefix)
        selector = pafs.FileSelector(path.rstrip("/"), recursive=True, allow_not_found=True)
        found = call(lambda: fs.get_file_info(selector), prefix, "list", self.policy)
        out = []
        for f in found:
            rel = f.path[len(path.rstrip("/")) :].lstrip("/")
            if f.type == pafs.FileType.File and (hidden or not _hidden(rel)):
                out.append(ObjectInfo(self._url(scheme, f.path), f.size, f.mtime_ns))
        return sorted(out, key=lambda o: o.url)

    def expand(
        self, patterns: Iterable[str], yaml_path: str = "reader.paths", extensions: tuple[str, ...] | None = None
    ) -> list[ObjectInfo]:
        """Globs (``**`` allowed), folders and single objects -> sorted, de-duplicated objects.

        Same contract as the local ``expand_paths``: a folder contributes its non-hidden files ending in one of
        ``extensions``, a glob is taken as written, a pattern matching nothing is an error naming it (exit 2).
        ``https://`` has no listing, so there a URL must name one object."""
        out: dict[str, ObjectInfo] = {}
        for i, pattern in enumerate(patterns):
            where = f"{yaml_path}[{i}]"
            found = self._expand_one(pattern, where, extensions)
            check_keys(pattern, found, where)
            for obj in found:
                out[obj.url] = obj
        return [out[k] for k in sorted(out)]

    def _expand_one(self, pattern: str, where: str, extensions: tuple[str, ...] | None) -> list[ObjectInfo]:
        scheme = urls.scheme_of(pattern)
        path = self.resolve(pattern)[1]
        if urls.has_wildcard(path) and scheme not in urls.READ_ONLY:
            rx = urls.glob_regex(path)
            base = self._url(scheme, urls.literal_prefix(path))
            matched = [
                o
                for o in self.list(base, hidden=True)
                if rx.match(urls.strip_scheme(o.url) if scheme != "file" else o.url)
            ]
            if not matched:
                raise ObjectNotFound(pattern, f"no object matches this glob ({where}); fix the path or glob")
            return matched
        got = self._stat(pattern)
        if got.type == pafs.FileType.File:
            return [ObjectInfo(pattern if scheme != "file" else path, got.size, got.mtime_ns)]
        if got.type == pafs.FileType.Directory:
            found = self.list(pattern)
            matched = [o for o in found if extensions is None or o.url.lower().endswith(extensions)]
            if matched:
                return matched
            if found:
                raise ObjectNotFound(
                    pattern,
                    f"holds no file ending in {', '.join(extensions or ())} ({where}); name the files or use a glob",
                )
        raise ObjectNotFound(pattern, f"no such object or prefix ({where}); fix the path")

    # -- reading ----------------------------------------------------------------------------------------------
    def open_input(self, url: str, block_size: int = STREAM_BLOCK, size: int | None = None) -> io.BufferedReader:
        """A streamed, seekable binary reader holding at most three blocks (the buffer, the block read, the next
        one fetched in the background): each block is one ranged request, resumed at the right byte when the
        connection breaks. Local files are opened directly."""
        if not urls.is_remote(url):
            return open(urls.strip_scheme(url), "rb", buffering=block_size)
        return io.BufferedReader(self._resuming(url, size, block_size, prefetch=True), buffer_size=block_size)

    def open_random(self, url: str, size: int | None = None) -> pa.NativeFile:
        """A random-access file for pyarrow (Parquet reads its footer, then each row group's byte range)."""
        if not urls.is_remote(url):
            return pa.OSFile(urls.strip_scheme(url), "rb")
        return pa.PythonFile(self._resuming(url, size), mode="r")

    def _resuming(
        self, url: str, size: int | None, block: int = STREAM_BLOCK, prefetch: bool = False
    ) -> ResumingReader:
        fs, path = self.resolve(url)
        size = self.info(url).size if size is None else size
        return ResumingReader(url, lambda: fs.open_input_file(path), size, self.policy, block, prefetch)

    def read_bytes(self, url: str) -> bytes:
        with self.open_input(url) as f:
            return f.read()

    # -- writing ----------------------------------------------------------------------------------------------
    def write_bytes(self, url: str, data: bytes) -> None:
        """Write one object whole: local files via a temp file and rename, objects by one PUT, retried whole."""
        self._write(url, lambda out: out.write(data))

    def put_file(self, local_path: str, url: str) -> None:
        """Upload a finished local file (a part file, a snapshot) as one object, retried whole from the file;
        pyarrow switches to a multipart upload for large ones (parts uploaded in the background)."""

        with open(local_path, "rb") as src:  # opened first: a file gone (FileNotFoundError) makes no object

            def copy(out: pa.NativeFile) -> None:
                src.seek(0)  # a retry starts the object over
                while piece := src.read(STREAM_BLOCK):
                    out.write(piece)

            self._write(url, copy)

    def _write(self, url: str, fill: Any) -> None:
        scheme = urls.scheme_of(url)
        if scheme in urls.READ_ONLY:
            raise StorageError(url, f"{scheme}:// is read only; write to s3:// or a local folder")
        fs, path = self.resolve(url)
        if scheme == "file":
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            tmp = f"{path}.tmp-{os.getpid()}"
            with open(tmp, "wb") as raw, pa.PythonFile(raw, mode="w") as out:
                fill(out)
            os.replace(tmp, path)
            return

        def attempt() -> None:
            with fs.open_output_stream(path, compression=None) as out:  # "detect" would gzip a .gz again
                fill(out)

        call(attempt, url, "write", self.policy)

    def copy(self, src: str, dst: str) -> None:
        """Copy one object inside one store (server-side on S3: no bytes pass through this process)."""
        fs, a = self.resolve(src)
        _, b = self.resolve(dst)
        call(lambda: fs.copy_file(a, b), src, f"copy to {dst}", self.policy)

    def delete(self, url: str, missing_ok: bool = True) -> None:
        fs, path = self.resolve(url)

        def attempt() -> None:
            try:
                fs.delete_file(path)
            except FileNotFoundError:
                if not missing_ok:
                    raise

        call(attempt, url, "delete", self.policy)

    def delete_prefix(self, url: str) -> None:
        """Delete every object under ``url`` (a folder or prefix); nothing there is not an error.

        On an object store: one listing, then :meth:`delete_many`. pyarrow's ``delete_dir_contents`` is several
        requests retried as one, which under 30 % SlowDown failed all 8 tries in one of three runs here."""
        fs, path = self.resolve(url)
        if not urls.is_remote(url):
            fs.delete_dir_contents(path.rstrip("/"), missing_dir_ok=True)
            return
        self.delete_many([o.url for o in self.list(url, hidden=True)])
        with contextlib.suppress(OSError):  # folder markers some servers list (SeaweedFS): best effort, no data
            fs.delete_dir(path.rstrip("/"))

    def delete_many(self, targets: list[str]) -> None:
        """Delete these objects (a missing one is no error).

        On S3: ``DeleteObjects``, up to 1,000 keys a request, each request retried by :func:`call` with only the
        keys the server has not deleted yet (a key answered ``SlowDown`` or ``InternalError`` is sent again; one
        answered ``AccessDenied`` fails the call naming the object). Measured on SeaweedFS (2 loaded cores):
        deleting a run's ten staged objects took 2.0-3.0 s as pyarrow ``delete_file`` calls from 16 threads
        (parallel deletes there stall ~1 s each; 0.05 s serially) and 0.02 s as one ``DeleteObjects``; on AWS it
        is one request instead of one per object. Elsewhere: one retried delete per object, 16 at a time."""
        s3 = [u for u in targets if urls.scheme_of(u) in ("s3", "s3a")]
        others = [u for u in targets if urls.scheme_of(u) not in ("s3", "s3a")]
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(self.delete, others))
        buckets: dict[tuple[str, str], list[str]] = {}
        for u in s3:
            bucket, _, key = urls.strip_scheme(u).partition("/")
            buckets.setdefault((urls.scheme_of(u), bucket), []).append(key)
        for (scheme, bucket), keys in buckets.items():
            for i in range(0, len(keys), 1000):
                self._delete_batch(scheme, bucket, keys[i : i + 1000])

    def _delete_batch(self, scheme: str, bucket: str, keys: list[str]) -> None:
        client = self.s3_client()
        left = list(keys)

        def attempt() -> None:
            got = client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in left], "Quiet": True})
            failed = [e for e in got.get("Errors", []) if e.get("Code") != "NoSuchKey"]
            left[:] = [e["Key"] for e in failed]
            if failed:  # call() retries the transient codes (SlowDown, InternalError) with these keys only
                first = failed[0]
                raise OSError(f"{first.get('Code')}: {first.get('Message')} ({first['Key']}, {len(failed)} key(s))")

        where = urls.with_scheme(scheme, f"{bucket}/{keys[0]}")
        call(attempt, where, f"delete of {len(keys)} objects", self.policy)


def _hidden(rel: str) -> bool:
    return any(part.startswith((".", "_")) for part in rel.split("/")[:-1]) or rel.startswith((".", "_"))


def s3_filesystem(settings: StorageSettings) -> pafs.S3FileSystem:
    """pyarrow's S3 file system from the settings, the standard AWS variables and the AWS credential chain."""
    s3 = settings.s3
    kwargs: dict[str, Any] = {
        "region": s3.resolved_region(),
        "connect_timeout": s3.connect_timeout_s,
        "request_timeout": s3.request_timeout_s,
        # no SDK retries under ours: measured through a 20 % SlowDown proxy, the SDK's backoff cost ~0.7 s per
        # retry (300 reads: 55 s) and its retry quota runs dry under sustained throttling
        "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=1),
        # an object smaller than one part goes up as one PutObject at close, not CreateMultipartUpload +
        # UploadPart + Complete: under 20 % SlowDown a try of three requests failed half the time and a run's
        # small _mdf/ files ran out of tries (tests/test_storage_write.py); errors now come at close, which is
        # inside the try that _write retries whole
        "allow_delayed_open": True,
    }
    endpoint = s3.resolved_endpoint()
    if endpoint:
        scheme, _, host = endpoint.partition("://")
        kwargs.update(endpoint_override=host, scheme=scheme)
    if s3.anonymous:
        kwargs["anonymous"] = True
    elif (keys := s3.key_pair() or _profile_keys(s3.profile)) is not None:
        kwargs.update(access_key=keys[0], secret_key=keys[1], session_token=keys[2])
    return pafs.S3FileSystem(**kwargs)


def _profile_keys(profile: str | None) -> tuple[str, str, str | None] | None:
    """Keys of a named profile (pyarrow's S3 has no profile option; botocore reads ``~/.aws`` the AWS way)."""
    if profile is None:
        return None
    try:
        import botocore.session
    except ImportError:
        raise MissingDependencyError("storage.s3.profile needs botocore: pip install boto3") from None
    creds = botocore.session.Session(profile=profile).get_credentials()
    if creds is None:
        raise StorageError(f"profile {profile}", "no credentials found for this AWS profile; run aws configure")
    frozen = creds.get_frozen_credentials()
    return frozen.access_key, frozen.secret_key, frozen.token


_default = Storage()


def configure(settings: StorageSettings | None) -> Storage:
    """Make ``settings`` (the recipe's ``storage:`` block) the process-wide default; returns the new layer."""
    global _default
    _default = Storage(settings)
    return _default


def default() -> Storage:
    return _default
