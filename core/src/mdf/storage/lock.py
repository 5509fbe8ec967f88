"""A run's lock on an S3 output: one object created with a conditional PUT, renewed while the run lives.

Locally a run holds ``flock`` on ``<output>/_mdf/lock`` and the kernel frees it when the process dies. S3 has no
such thing, so the lock is an object, ``<output>/_mdf/lock``, whose body names the holder (run id, pid, host,
start time):

* **Take**: ``PUT`` with ``If-None-Match: *``. S3 (since 2024-08) and SeaweedFS refuse it with ``412
  PreconditionFailed`` when the object exists, so exactly one of two racing runs gets it.
* **Renew**: every ``ttl_s / 3`` a background thread re-``PUT``s the body with ``If-Match: <our ETag>``; a 412
  means another run took the lock over (ours was judged stale), and :meth:`S3Lock.check` then fails the run
  before it publishes anything.
* **Stale**: a lock is stale when the server's own clock (the ``Date`` of our ``GET``) is more than the lock's
  ``ttl_s`` past its ``Last-Modified``: no client clock is trusted. A stale lock (a run killed by SIGKILL, a
  lost machine) is taken over with ``If-Match: <its ETag>``, so two runs taking over the same stale lock cannot
  both win. A live holder is refused with one line naming it (exit 2).
* **Release**: ``DELETE`` with ``If-Match: <our ETag>``: never deletes a lock that is no longer ours.

Each step is one operation of :mod:`mdf.storage.conditional` (``create_exclusive``, ``write_if``,
``read_versioned``, ``delete_if``), the ones the dedup index's manifest and lock use too.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from mdf.storage import urls
from mdf.storage.conditional import PreconditionFailed, create_exclusive, delete_if, read_versioned, write_if
from mdf.storage.config import StorageSettings
from mdf.storage.errors import LockHeld, StorageError

if TYPE_CHECKING:
    from mdf.storage.fs import Storage

DEFAULT_TTL_S = 60.0


class S3Lock:
    """The lock object ``<output>/_mdf/lock`` (``url``) of one run.

    :param holder: what a refused run prints about this one (e.g. ``{"run_id": ..., "recipe": ...}``); pid,
        host and start time are added.
    :param ttl_s: seconds without renewal after which the lock counts as stale (renewed every ``ttl_s / 3``).
    :param storage: whose botocore client and retry policy the requests use (else a new one for ``settings``).
    """

    def __init__(
        self,
        url: str,
        holder: dict[str, Any] | None = None,
        ttl_s: float = DEFAULT_TTL_S,
        settings: StorageSettings | None = None,
        storage: Storage | None = None,
    ) -> None:
        if urls.scheme_of(url) not in ("s3", "s3a"):
            raise StorageError(url, "an object lock needs an s3:// URL")
        if storage is None:
            from mdf.storage.fs import Storage

            storage = Storage(settings)
        self.url, self.ttl_s, self.storage = url, ttl_s, storage
        self.token = uuid.uuid4().hex
        self.holder = {
            **(holder or {}),
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        self.etag: str | None = None
        self.lost: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _body(self) -> bytes:
        return json.dumps({"holder": self.holder, "token": self.token, "ttl_s": self.ttl_s}).encode()

    # -- taking -----------------------------------------------------------------------------------------------
    def acquire(self) -> S3Lock:
        """Take the lock (or a stale one) and start renewing it; :class:`LockHeld` naming the live holder."""
        try:
            self.etag = create_exclusive(self.storage, self.url, self._body())
        except PreconditionFailed:
            current = self.read()
            if current is None:  # released between our PUT and our HEAD: try once more from the start
                return self.acquire()
            if current["token"] == self.token:  # our own PUT went through before a reset hid its answer
                self.etag = current["etag"]
            elif current["age_s"] <= current["ttl_s"] and not dead_on_this_host(current["holder"]):
                raise LockHeld(self.url, f"held by another run: {_describe(current)}; wait for it to finish, or "
                               f"if it was killed the lock is taken over {current['ttl_s']:.0f} s after its "
                               "last renewal") from None  # fmt: skip
            else:
                try:
                    self.etag = write_if(self.storage, self.url, self._body(), current["etag"])
                except PreconditionFailed:
                    now = self.read()
                    raise LockHeld(self.url, f"a stale lock was taken over by another run first: "
                                   f"{_describe(now) if now else 'since released'}") from None  # fmt: skip
        self._thread = threading.Thread(target=self._renew_loop, name="mdf-s3-lock", daemon=True)
        self._thread.start()
        return self

    def read(self) -> dict[str, Any] | None:
        """The current lock: its holder, token, ETag, ttl and age by the server's clock; ``None`` if absent."""

        got = read_versioned(self.storage, self.url)
        if got is None:
            return None
        body = json.loads(got.data or b"{}")
        return {
            "holder": body.get("holder", {}),
            "token": body.get("token"),
            "ttl_s": float(body.get("ttl_s", DEFAULT_TTL_S)),
            "etag": got.version,
            "age_s": got.age_s,
        }

    # -- keeping ----------------------------------------------------------------------------------------------
    def renew(self) -> None:
        """Re-write the lock if it is still ours; otherwise remember that it was lost (see :meth:`check`)."""
        if self.etag is None or self.lost:
            return
        try:
            self.etag = write_if(self.storage, self.url, self._body(), self.etag)
        except PreconditionFailed:
            now = self.read()
            self.lost = f"taken over by {_describe(now)}" if now else "deleted by someone else"
        except StorageError as exc:  # the server unreachable for a whole retry budget: say so at check()
            self.lost = f"could not be renewed: {str(exc).removeprefix(self.url + ': ')}"

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            self.renew()

    def check(self) -> None:
        """Raise when the lock was lost: call before publishing anything."""
        if self.lost:
            raise LockHeld(self.url, f"this run's lock was lost ({self.lost}); nothing more is published")

    def release(self) -> None:
        """Stop renewing and delete the lock if it is still ours."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.etag is None or self.lost:
            return
        with contextlib.suppress(StorageError):  # not ours any more (412) or already gone: nothing to release
            delete_if(self.storage, self.url, self.etag)
        self.etag = None

    def __enter__(self) -> S3Lock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def dead_on_this_host(holder: dict[str, Any]) -> bool:
    """The holder of a lock (``{"pid", "host", ...}``) ran on this host and its process is gone (kill -9, a
    crash): its lock is stale now, not after its ttl; as a local ``flock`` is dropped by the kernel when its
    process dies. Another host's holder, or one without a usable pid (a damaged lock: ``kill(-1, 0)`` would ask
    every process), is judged by the ttl alone (we cannot see its processes). Every lock mdf takes on object
    storage asks this: the output's and the dedup index's.

    A holder may name the run it works for (``driver``: the ``mdf run`` process's pid and host): a Ray actor that
    took a dedup index's lock for a run outlives a driver killed with -9 by seconds (longer on a loaded host) and
    renews the lock meanwhile; the run's ``--resume`` takes it over as soon as the driver is gone. The orphan's
    next renewal is conditional on its own ETag, so it finds the lock lost and publishes nothing."""
    driver = holder.get("driver")
    if isinstance(driver, dict) and _gone(driver):  # the run's own process (a Ray actor may hold it for the run)
        return True
    return _gone(holder)


def _gone(who: dict[str, Any]) -> bool:
    """``who`` (``{"pid", "host"}``) ran on this host and its process is gone."""
    pid = who.get("pid")
    if who.get("host") != socket.gethostname() or not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def _describe(current: dict[str, Any]) -> str:
    h = current.get("holder", {})
    who = ", ".join(f"{k} {h[k]}" for k in ("run_id", "pid", "host", "started") if k in h)
    return f"{who or 'unknown holder'} (renewed {current['age_s']:.0f} s ago)"
