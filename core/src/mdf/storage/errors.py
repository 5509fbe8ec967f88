"""Errors of the storage layer: each one line naming the object URL, never a credential."""

from __future__ import annotations

from mdf.errors import InputError, MdfError
from mdf.storage.redact import redact_text, redact_url


class StorageError(MdfError):
    """An object store request failed for good (after retries where the failure was transient).

    :param url: the object or prefix, e.g. ``s3://bucket/key``.
    """

    def __init__(self, url: str, message: str) -> None:
        self.url = redact_url(url)  # the URL as written down: userinfo and presigned parameters left out
        self.message = redact_text(message)  # an SDK's own message may quote the URL whole
        super().__init__(f"{self.url}: {self.message}")

    def __reduce__(self) -> tuple[type[StorageError], tuple[str, str]]:
        """Pickled as its two arguments: raised in a Ray actor it reaches the driver as itself, one line naming the
        URL (with ``args`` alone, unpickling called ``__init__`` with one argument and Ray reported an
        ``UnserializableException`` instead)."""
        return (type(self), (self.url, self.message))


class ObjectNotFound(StorageError, InputError):
    """The object, bucket or glob match does not exist."""

    exit_code = 2


class LockHeld(StorageError):
    """Another live run holds the output's lock object; the message names it."""

    exit_code = 2
