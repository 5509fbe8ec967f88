"""Object storage for mdf: one file-system layer for local paths, ``s3://``, ``https://`` and fsspec protocols.

What plugins and core use (``import mdf.storage``; this package is part of mdf's public API)::

    storage = mdf.storage.default()            # or Storage(parse_storage(recipe_block))
    objs = storage.expand(["s3://b/cc/**/*.warc.gz"], "reader.paths", (".warc.gz",))
    with storage.open_input(objs[0].url) as f:  # streamed: one ranged GET per 8 MiB block, resumed on resets
        ...
    pq.ParquetFile(storage.open_random(url))    # footer and row groups read by range
    storage.put_file("part.parquet.tmp", "s3://b/out/_mdf/staging/<run>/part.parquet")

    got = mdf.storage.read_versioned(storage, url)  # conditional operations: local paths and s3:// alike
    mdf.storage.write_if(storage, url, new_bytes, got.version)  # PreconditionFailed if changed since

Modules: :mod:`~mdf.storage.fs` (the layer), :mod:`~mdf.storage.retry` (backoff, resuming reads, ``call``),
:mod:`~mdf.storage.conditional` (read with a version, write/delete if unchanged, create if absent),
:mod:`~mdf.storage.config` (the recipe's ``storage:`` block), :mod:`~mdf.storage.redact` (credentials out of every
URL mdf writes down), :mod:`~mdf.storage.lock` (a lock object on S3), :mod:`~mdf.storage.multipart` (a part
uploaded to its final key, invisible until completed), :mod:`~mdf.storage.commoncrawl` (``warc.paths.gz``
listings), :mod:`~mdf.storage.cache` (models and tokenizers named by URL, fetched once per machine).

This package is object I/O. What makes a prefix a run's output (who owns it, how the run's files are mirrored to a
staging prefix and published with ``_SUCCESS``) is :mod:`mdf.output`, built on these primitives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mdf.lazy import exports as _lazy_exports

# Imported on first use: every run expands its input paths through this package, and the S3 side (pyarrow.fs,
# ssl, the retry policy) costs ~20 ms of start-up that a run over local files never needs.
_EXPORTS = {
    "FetchError": "mdf.storage.cache",
    "local_copy": "mdf.storage.cache",
    "CommonCrawlListing": "mdf.storage.commoncrawl",
    "commoncrawl_urls": "mdf.storage.commoncrawl",
    "PreconditionFailed": "mdf.storage.conditional",
    "Versioned": "mdf.storage.conditional",
    "create_exclusive": "mdf.storage.conditional",
    "delete_if": "mdf.storage.conditional",
    "read_versioned": "mdf.storage.conditional",
    "write_if": "mdf.storage.conditional",
    "S3Settings": "mdf.storage.config",
    "StorageSettings": "mdf.storage.config",
    "parse_storage": "mdf.storage.config",
    "LockHeld": "mdf.storage.errors",
    "ObjectNotFound": "mdf.storage.errors",
    "StorageError": "mdf.storage.errors",
    "ObjectInfo": "mdf.storage.fs",
    "Storage": "mdf.storage.fs",
    "configure": "mdf.storage.fs",
    "default": "mdf.storage.fs",
    "S3Lock": "mdf.storage.lock",
    "dead_on_this_host": "mdf.storage.lock",
    "redact_text": "mdf.storage.redact",
    "redact_url": "mdf.storage.redact",
    "RetryPolicy": "mdf.storage.retry",
    "call": "mdf.storage.retry",
    "is_transient": "mdf.storage.retry",
    "has_wildcard": "mdf.storage.urls",
    "is_remote": "mdf.storage.urls",
    "join": "mdf.storage.urls",
    "literal_prefix": "mdf.storage.urls",
    "scheme_of": "mdf.storage.urls",
}

if TYPE_CHECKING:
    from mdf.storage.cache import FetchError, local_copy
    from mdf.storage.commoncrawl import CommonCrawlListing, commoncrawl_urls
    from mdf.storage.conditional import (
        PreconditionFailed,
        Versioned,
        create_exclusive,
        delete_if,
        read_versioned,
        write_if,
    )
    from mdf.storage.config import S3Settings, StorageSettings, parse_storage
    from mdf.storage.errors import LockHeld, ObjectNotFound, StorageError
    from mdf.storage.fs import ObjectInfo, Storage, configure, default
    from mdf.storage.lock import S3Lock, dead_on_this_host
    from mdf.storage.redact import redact_text, redact_url
    from mdf.storage.retry import RetryPolicy, call, is_transient
    from mdf.storage.urls import has_wildcard, is_remote, join, literal_prefix, scheme_of

__getattr__ = _lazy_exports(__name__, _EXPORTS)

__all__ = [
    "CommonCrawlListing",
    "FetchError",
    "LockHeld",
    "ObjectInfo",
    "ObjectNotFound",
    "PreconditionFailed",
    "RetryPolicy",
    "S3Lock",
    "S3Settings",
    "Storage",
    "StorageError",
    "StorageSettings",
    "Versioned",
    "call",
    "commoncrawl_urls",
    "configure",
    "create_exclusive",
    "dead_on_this_host",
    "default",
    "delete_if",
    "has_wildcard",
    "is_remote",
    "is_transient",
    "join",
    "literal_prefix",
    "local_copy",
    "parse_storage",
    "read_versioned",
    "redact_text",
    "redact_url",
    "scheme_of",
    "write_if",
]
