"""Secrets out of URLs before mdf writes one anywhere: rows, ``_mdf/`` files, the report, the log, the terminal.

An input URL may carry a credential: ``https://user:password@host/x``, a presigned S3 or GCS URL
(``?X-Amz-Signature=...&X-Amz-Credential=...``), an Azure SAS (``?sv=...&sig=...``), an API token
(``?token=...``). mdf keeps the real URL in memory to read the object, and writes only :func:`redact_url` of it:
the same URL with the userinfo replaced by ``***`` and the value of every credential parameter replaced by
``***``, everything else (scheme, host, port, path, other parameters, fragment) kept, so the lineage still names
the object. Free text that may quote a URL (an error message, a log line) goes through :func:`redact_text`.

Credential parameters (names compared case-insensitively), the documented list:

* any name starting with ``x-amz-`` (AWS SigV4 presigned URLs: ``X-Amz-Signature``, ``X-Amz-Credential``,
  ``X-Amz-Security-Token``...) or ``x-goog-`` (GCS V4 signed URLs);
* :data:`SECRET_NAMES`: S3 SigV2 and GCS V2 (``Signature``, ``AWSAccessKeyId``, ``GoogleAccessId``), Azure's
  ``sig``, and the generic ``token``, ``access_token``, ``api_key``, ``key``, ``password``, ``secret``, ``auth``...;
* any name containing ``token``, ``secret``, ``passw``, ``signature`` or ``credential``;
* in an Azure SAS (a query with ``sig``): every SAS field (:data:`SAS_FIELDS`: ``se``, ``sp``, ``sv``, ``st``...),
  which are only worth hiding together with the signature they were signed with.

A parameter that is not a credential but has such a name loses its value in what mdf writes (never in what it
reads); two inputs that then look the same are refused by :func:`mdf.io.sharding.shard_ids`, never merged.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
SECRET_NAMES = frozenset(
    {
        "token", "access_token", "refresh_token", "id_token", "auth_token", "api_key", "apikey", "api-key", "key",
        "password", "passwd", "pwd", "pass", "secret", "client_secret", "auth", "authorization", "credential",
        "credentials", "signature", "sig", "awsaccesskeyid", "googleaccessid", "session_token", "security_token",
    }
)  # fmt: skip
SECRET_PREFIXES = ("x-amz-", "x-goog-")
SECRET_PARTS = ("token", "secret", "passw", "signature", "credential")
SAS_FIELDS = frozenset(
    {
        "sv", "ss", "srt", "sp", "se", "st", "spr", "sip", "sr", "si", "sdd", "ses", "skoid", "sktid", "skt", "ske",
        "sks", "skv", "saoid", "suoid", "scid", "sduoid",
    }
)  # fmt: skip
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`\\]+")  # stops at a quote or a JSON escape


def is_secret_param(name: str, sas: bool = False) -> bool:
    """Whether the query parameter ``name`` carries (or, in an Azure SAS, is signed into) a credential."""
    low = name.lower()
    return (
        low in SECRET_NAMES
        or low.startswith(SECRET_PREFIXES)
        or any(part in low for part in SECRET_PARTS)
        or (sas and low in SAS_FIELDS)
    )


def redact_url(url: str) -> str:
    """``url`` without its credentials (see the module docstring); a plain path or a clean URL comes back as is.

    ``http://u:pw@h:8/x.warc.gz?token=abc&part=2`` -> ``http://***@h:8/x.warc.gz?token=***&part=2``."""
    if "://" not in url or ("@" not in url and "?" not in url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL urllib can split (a bad IPv6 literal): hide everything after the host
        scheme = url.partition("://")[0]
        return f"{scheme}://{MASK}"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rpartition("@")[2]
    query = _redact_query(parts.query) if parts.query else parts.query
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _redact_query(query: str) -> str:
    pairs = [p.partition("=") for p in query.split("&")]
    sas = any(name.lower() == "sig" for name, _, _ in pairs)
    return "&".join(
        f"{name}={MASK}" if eq and value and is_secret_param(name, sas) else f"{name}{eq}{value}"
        for name, eq, value in pairs
    )


def redact_tree(value: Any) -> Any:
    """A JSON-like value (a recipe dumped to a dict) with every string through :func:`redact_text`."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_tree(v) for v in value]
    return value


def redact_text(text: str) -> str:
    """Every URL in ``text`` (an error message, a log line, a JSON document) through :func:`redact_url`.

    A URL ends at white space, a quote or a backslash, so in JSON text only characters inside a string change
    (a value becomes ``***``) and the document stays valid."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m.group()), text)
