"""What a listing or a stat of the object store cannot be taken at its word for.

* A key with an empty segment (``a//b``) is listed by S3 but cannot be read through pyarrow: refused when the
  input is listed (:func:`check_keys`), not when the run reaches it.
* fsspec answers an ``http(s)://`` host that does not answer (connection refused, no such name) as it answers a
  404, with ``FileNotFoundError``, so a dead server read as "no such object": :func:`answers` tells them apart.
"""

from __future__ import annotations

from typing import Any

import pyarrow.fs as pafs

from mdf.errors import RecipeError
from mdf.storage import urls
from mdf.storage.redact import redact_url
from mdf.storage.retry import reason, status_of


def check_keys(pattern: str, found: list[Any], where: str) -> None:
    """Refuse (exit 2, before any work) object keys with an empty segment (``a//b``, ``/a``): S3 and most
    S3-compatible servers keep them as keys of their own and a listing returns them, but pyarrow's S3 file
    system cannot open or stat such a path ("Empty path component"), so the run would stop when it reached the
    file; SeaweedFS folds ``//`` into ``/`` when the object is written, so it never lists one."""
    if urls.scheme_of(pattern) not in ("s3", "s3a"):
        return
    bad = [o.url for o in found if "" in urls.strip_scheme(o.url).split("/")[1:]]
    if bad:
        raise RecipeError(
            f"{len(bad)} object(s) under {redact_url(pattern)!r} have a key with an empty segment, e.g. "
            f"{redact_url(bad[0])!r}: pyarrow's S3 file system cannot read such a key; copy them to keys without "
            "'//' (or a leading '/') or narrow the glob",
            where,
        )


def answers(fs: pafs.FileSystem, url: str, host: str) -> None:
    """Raise :class:`ConnectionError` (retried by :func:`call`) when the server of a not-found ``http(s)://``
    URL gave no HTTP answer at all; a 404 or any other status returns."""
    try:
        fs.handler.fs.info(url)
    except FileNotFoundError as exc:
        cause = exc.__cause__
        if cause is not None and status_of(cause) is None:
            raise ConnectionError(f"cannot connect to {host}: {reason(cause)}") from None
