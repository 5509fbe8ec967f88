"""One line for a failure, whichever executor ran it: :func:`in_stage` adds the stage's name to an operator's
:class:`~mdf.errors.OperatorError` (which names operator, shard and batch). On Ray the same exception arrives
wrapped in Ray's error, which :func:`mdf.executor.ray.errors.local_error` unwraps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from mdf.errors import OperatorError


@contextlib.contextmanager
def in_stage(name: str) -> Iterator[None]:
    """Prefix an operator failure with the stage it happened in (once)."""
    try:
        yield
    except OperatorError as exc:
        if str(exc).startswith("stage '"):
            raise
        raise OperatorError(f"stage '{name}': {exc}") from exc
