"""The index's two refusals, in a module of their own: the manifest raises :class:`Conflict` that the object
store finds and the object store raises :class:`IndexBusy` that the lock defines, so beside either module they
would make ``files -> objects -> manifest -> files`` a circle."""

from __future__ import annotations


class IndexBusy(Exception):
    """Another run is updating the index; the message names it."""


class Conflict(Exception):
    """A conditional write found the object changed (HTTP 412)."""
