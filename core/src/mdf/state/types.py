"""Bucket-side state types: how a plugin keeps more than "was this key claimed first" in the key-state service.

The key-state service (:class:`mdf.KeyState`) knows one verb of its own, ``claim``, and the two passes of
cluster mode. Anything else a deduplicator needs on the bucket side (a near-duplicate index, a store of
signatures) is a :class:`StateType`: a plain class the plugin ships and registers through the
``mdf_register_state_types`` hook, and declares on its operator (``Deduplicator.state_types``). The service
then only

* routes a request's rows to buckets (``route % num_buckets``), one round trip a batch
  (:meth:`mdf.KeyState.request`),
* keeps one instance per (bucket, namespace), created on first use with no arguments,
* snapshots and restores those instances with the rest of the bucket (pickle), and
* adds their :meth:`StateType.stats` to the run's key-state figures.

A state type's methods take and return numpy arrays (no Python object per row); whatever they return for a
bucket's share of the rows comes back to the caller with the row indices it answers. Idempotency under
retries (a batch re-run after a crash) is the state type's own contract: a retried request must get the
answer the first one got, e.g. by storing per position and keeping the first value.

State that outlives the run (``mdf_dedup``'s persistent index publishes the keys a run added) acts when the run
has succeeded: :meth:`StateType.finish` runs in every bucket holding an instance, then
:meth:`StateType.commit` once in the driver with all their results. A run that fails calls neither.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

NO_MATCH = np.uint64(np.iinfo(np.uint64).max)
"""The position a lookup answers when nothing matched (no row has this position)."""


class StateType:
    """Base of every bucket-side state type; subclass it, give it a unique ``name`` and public methods.

    The instance must pickle (a snapshot is the pickled bucket), so hold numpy arrays or picklable native
    objects, never open files or locks.
    """

    name: ClassVar[str] = ""

    def stats(self) -> tuple[int, int]:
        """``(items, bytes)`` held, for the run's key-state figures; override when the state is large."""
        return 0, 0

    def finish(self, run: dict[str, Any]) -> Any:
        """Called once in its bucket when the run has succeeded (every shard committed), before the run's last
        snapshot; the result goes to :meth:`commit`, after it. ``run``: ``fingerprint`` and ``output`` of the run
        (the same on a ``--resume``). So what finish has written need not be pickled too: the snapshot is taken
        after it, and a resume from that snapshot calls finish again on the finished instance (return the same
        result, checking that what it wrote is still there)."""
        return None

    @classmethod
    def commit(cls, namespace: str, results: list[Any], run: dict[str, Any]) -> None:
        """Called once in the driver after :meth:`finish` ran in every bucket holding an instance of
        ``namespace``, with their results (e.g. publish what the buckets wrote, in one atomic step)."""
