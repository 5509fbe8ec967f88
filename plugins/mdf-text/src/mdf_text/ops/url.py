"""``url_filter``: drop rows whose URL host (or any parent domain of it) is blocklisted.

Hosts are extracted with one RE2 pass over the column and looked up per *distinct* host (web crawls repeat
hosts heavily, so dictionary-encoding the hosts shrinks the work), walking up the parent domains
(``a.b.example.com -> b.example.com -> example.com -> com``) with vectorised ``is_in`` passes, one per label.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, field_validator, model_validator

from mdf import Filter, InputFile, Params, has_native_kernel, lit, native_kernel
from mdf.storage import is_remote

# scheme (optional, "//" required), optional userinfo, then the host: a bracketed IPv6 literal or up to : / ? #
_HOST_RE = r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:)?//(?:[^@/?#]*@)?(?P<host>\[[^\]/?#]*\]|[^:/?#\[\]]*)"
_BAD_HOST_CHARS = r"[\s<>\"{}|\\^`%]"


def read_blocklist(path: str | Path) -> list[str]:
    """Domains from a file: one a line, ``#`` starts a comment, ``*.`` and surrounding dots ignored. ``path`` may
    be a URL (``s3://``, ``https://``, ...): read through :mod:`mdf.storage`, like the reader's inputs, so a
    recipe run on a cluster needs no local copy of its blocklist."""
    if is_remote(str(path)):
        from mdf.storage import default

        text = default().read_bytes(str(path)).decode("utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        domain = normalize_domain(line.split("#", 1)[0])
        if domain:
            out.append(domain)
    return out


def normalize_domain(domain: str) -> str:
    d = domain.strip().lower()
    d = d.removeprefix("*.")
    return d.strip(".")


def url_hosts(urls: pa.Array) -> pa.Array:
    """Lower-cased host of each URL (IPv6 brackets and trailing dot removed); null when there is none."""
    host = pc.struct_field(pc.extract_regex(urls, _HOST_RE), "host")
    return clean_hosts(pc.utf8_trim(pc.utf8_lower(host), "[]"))


def clean_hosts(host: pa.Array) -> pa.Array:
    """Drop a trailing dot; null for an empty host or one with characters no host has (a mangled URL)."""
    host = pc.utf8_rtrim(host, ".")
    bad = pc.or_kleene(pc.equal(pc.utf8_length(host), lit(0)), pc.match_substring_regex(host, _BAD_HOST_CHARS))
    return pc.if_else(bad, pa.scalar(None, pa.string()), host)


def native_kernels() -> Any:
    """``mdf_kernels`` when installed with the URL kernels (``pip install ./rust``): host parsing and the
    parent-domain walk in Rust; ``None`` otherwise (the pyarrow engine does the same work)."""
    if not has_native_kernel("url_host"):
        return None
    import mdf_kernels

    return mdf_kernels


def domains_blocked(hosts: pa.Array, blocklist: pa.Array) -> pa.BooleanArray:
    """True where the host or one of its parent domains is in ``blocklist``; false for null hosts."""
    blocked = pc.fill_null(pc.is_in(hosts, value_set=blocklist), False)
    current = hosts
    while True:
        has_parent = pc.fill_null(pc.match_substring(current, "."), False)
        if not pc.any(has_parent).as_py():
            return blocked
        parent = pc.replace_substring_regex(current, r"^[^.]*\.", "", max_replacements=1)
        current = pc.if_else(has_parent, parent, pa.scalar(None, pa.string()))
        blocked = pc.or_(blocked, pc.fill_null(pc.is_in(current, value_set=blocklist), False))


class UrlFilter(Filter):
    """Drop rows whose URL host or a parent domain is blocklisted (or has a blocked word); bad URLs dropped."""

    name = "url_filter"
    fusable = True  # decides each row from that row alone
    reads = {"column": "string"}

    class Params(Params):
        column: str = Field("url", description="string column holding the URL")
        blocklist: InputFile | None = Field(
            None, description="file of domains, one a line, '#' comments: a local path or a URL (s3://, https://)"
        )
        domains: list[str] = Field(default_factory=list, description="more blocked domains, inline")
        block_words: list[str] = Field(default_factory=list, description="drop URLs containing any (any case)")
        engine: Literal["auto", "native", "arrow"] = Field(
            "auto", description="native = mdf-kernels (Rust), arrow = pyarrow.compute; auto: native when installed"
        )

        @field_validator("blocklist")
        @classmethod
        def _a_file(cls, value: str | None) -> str | None:
            """A local blocklist must be a file now (before any work); a URL is read, and checked, at setup."""
            if value is not None and not is_remote(value) and not Path(value).is_file():
                raise ValueError(f"{value!r} is not a file; give the blocklist's path or its s3:// / https:// URL")
            return value

        @model_validator(mode="after")
        def _something_to_block(self) -> UrlFilter.Params:
            if self.blocklist is None and not self.domains and not self.block_words:
                raise ValueError("nothing to filter on; give blocklist, domains or block_words")
            return self

    def setup(self) -> None:
        p = self.params
        domains = [normalize_domain(d) for d in p.domains]
        if p.blocklist is not None:
            domains += read_blocklist(p.blocklist)
        self._blocklist = pa.array(sorted(set(filter(None, domains))), pa.string())
        self._native = native_kernels() if p.engine != "arrow" else None
        if p.engine == "native" and self._native is None:
            native_kernel("url_host", "url_filter engine 'native'")  # raises, naming the install
        self._domain_set = self._native.DomainSet(self._blocklist) if self._native is not None else None
        words = [w for w in p.block_words if w]
        self._word_re = "|".join(re.escape(w) for w in words) if words else None

    def keep(self, batch: pa.RecordBatch) -> tuple[pa.BooleanArray, pa.Array]:
        urls = batch.column(self.params.column)
        if self._native is not None:
            hosts = clean_hosts(self._native.url_host(urls))
            blocked = pc.fill_null(self._native.domain_blocked(hosts, self._domain_set), False)
        else:
            hosts = url_hosts(urls)
            encoded = pc.dictionary_encode(hosts)  # a crawl repeats hosts: walk parent domains once per host
            blocked = domains_blocked(encoded.dictionary, self._blocklist)
            blocked = pc.fill_null(pc.take(blocked, encoded.indices), False)
        bad = pc.is_null(hosts)
        if self._word_re is not None:
            worded = pc.fill_null(pc.match_substring_regex(urls, self._word_re, ignore_case=True), False)
        else:
            worded = pa.repeat(lit(False), len(urls))
        drop = pc.or_(pc.or_(bad, blocked), worded)
        reason = pc.if_else(bad, lit("bad_url"), pc.if_else(blocked, lit("blocked_domain"), lit("blocked_word")))
        return pc.invert(drop), reason
