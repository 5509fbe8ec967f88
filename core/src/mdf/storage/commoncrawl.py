"""CommonCrawl's listing convention: a crawl is named by ``warc.paths.gz`` (or ``wet.paths.gz``), a gzip text
file with one object key per line (``crawl-data/CC-MAIN-2024-10/segments/.../x.warc.gz``), and the keys are
resolved against a base: ``s3://commoncrawl/`` (inside AWS, credentials needed) or
``https://data.commoncrawl.org/`` (anywhere, anonymous, ranged reads).

A slice picks part of a crawl (a crawl has ~90,000 WARC files): ``first``/``limit`` for a prefix of the list,
``shard``/``of`` for one of ``of`` contiguous, near-equal blocks (so ``of`` machines can split a crawl with
nothing shared between them but the paths file). Both may be combined: the shard is cut from the
``first``/``limit`` window.
"""

from __future__ import annotations

import gzip
import io
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mdf.errors import RecipeError
from mdf.storage import urls
from mdf.storage.fs import Storage, default
from mdf.storage.redact import redact_url
from mdf.validation import format_validation_error

S3_BASE = "s3://commoncrawl/"
HTTPS_BASE = "https://data.commoncrawl.org/"


class CommonCrawlListing(BaseModel):
    """The reader parameter (e.g. ``reader: {type: warc, commoncrawl: {paths_file: ..., limit: 10}}``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    paths_file: str
    """A ``warc.paths.gz``/``wet.paths.gz`` (or plain text) file: local path, ``s3://`` or ``https://`` URL."""
    base: str = HTTPS_BASE
    """Prefix each listed key is appended to: ``s3://commoncrawl/`` or ``https://data.commoncrawl.org/``."""
    first: int = Field(0, ge=0)
    limit: int | None = Field(None, ge=1)
    shard: int | None = Field(None, ge=0)
    of: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _check(self) -> CommonCrawlListing:
        if (self.shard is None) != (self.of is None):
            raise ValueError("shard and of go together (shard: 3, of: 16 reads the 4th of 16 blocks); set both")
        if self.shard is not None and self.of is not None and self.shard >= self.of:
            raise ValueError(f"shard {self.shard} is not below of {self.of}; shards are numbered 0..of-1")
        if not urls.is_remote(self.base) and not self.base.startswith("/"):
            raise ValueError(f"base must be a URL like {S3_BASE!r} or {HTTPS_BASE!r} or an absolute folder")
        return self

    def select(self, keys: list[str]) -> list[str]:
        window = keys[self.first : None if self.limit is None else self.first + self.limit]
        if self.shard is not None and self.of is not None:
            n = len(window)
            window = window[self.shard * n // self.of : (self.shard + 1) * n // self.of]
        return [urls.join(self.base, k) for k in window]


def parse_listing(value: Any, yaml_path: str = "reader.commoncrawl") -> CommonCrawlListing:
    """Validate the reader parameter; errors name the YAML path (exit 2)."""
    try:
        return CommonCrawlListing.model_validate(value)
    except ValidationError as exc:
        raise format_validation_error(exc, yaml_path, CommonCrawlListing) from None


def read_keys(
    paths_file: str, storage: Storage | None = None, yaml_path: str = "reader.commoncrawl.paths_file"
) -> list[str]:
    """The keys of a paths file (gzip when its name ends in ``.gz``): one a line, UTF-8 with or without a byte
    order mark, blank lines and lines starting with ``#`` skipped, surrounding white space dropped.

    A key is a path below ``base``: an absolute path, a URL, a ``..``, ``.`` or empty segment (``a//b``) is
    refused, naming the line (exit 2). Otherwise a listing could name files outside a local ``base``
    (``../../etc/x``, ``/home/me/x``), or one file under two names that a server reads as one (``a//b``)."""
    storage = storage or default()
    data = storage.read_bytes(paths_file)
    if paths_file.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise RecipeError(f"{paths_file}: not a readable gzip file ({exc}); point at a warc.paths.gz") from None
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="strict")
    keys = []
    for number, line in enumerate(text, 1):
        key = line.strip()
        if not key or key.startswith("#"):
            continue
        if problem := _not_a_key(key):
            raise RecipeError(
                f"line {number} of {redact_url(paths_file)}: {key!r} {problem}; a paths file lists keys relative to "
                "base, like crawl-data/CC-MAIN-2024-10/segments/.../x.warc.gz",
                yaml_path,
            )
        keys.append(key)
    return keys


def _not_a_key(key: str) -> str | None:
    if urls.is_remote(key):
        return "is a URL"
    if key.startswith(("/", "\\")):
        return "is an absolute path"
    parts = key.split("/")
    if ".." in parts:
        return "leaves base ('..')"
    if "" in parts or "." in parts:
        return "has an empty or '.' segment"
    return None


def commoncrawl_urls(
    listing: CommonCrawlListing | dict[str, Any],
    storage: Storage | None = None,
    yaml_path: str = "reader.commoncrawl",
) -> list[str]:
    """The object URLs a listing names after its slice; an empty slice is an error naming the YAML path."""
    if not isinstance(listing, CommonCrawlListing):
        listing = parse_listing(listing, yaml_path)
    keys = read_keys(listing.paths_file, storage, f"{yaml_path}.paths_file")
    out = listing.select(keys)
    if not out:
        raise RecipeError(
            f"the slice selects no file of {listing.paths_file} ({len(keys)} listed); lower first or shard",
            yaml_path,
        )
    return out
