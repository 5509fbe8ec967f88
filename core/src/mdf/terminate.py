"""SIGTERM ends a run the way ``^C`` does, on every executor: its folders are released, ``run.json`` says
``failed`` with the reason, and ``mdf run`` exits ``128 + 15`` with one line saying ``--resume`` continues it.

Why a module and a flag rather than only a handler that raises :class:`~mdf.errors.Terminated`: on Ray the
signal usually arrives while the driver waits inside Ray's core (``ray.wait``/``ray.get``), and Ray turns any
exception its signal check meets into its own (``SystemExit: 1`` or a bare ``KeyboardInterrupt``), dropping
ours. ``ray.init`` also replaces the handler with one that calls ``sys.exit(15)``. So the handler records that
the signal came, :func:`reclaim` puts it back after ``ray.init``, and :func:`as_terminated` trusts the record
over the exception that surfaced (a CI run saw exit 1 and ``SystemExit: 1`` in ``run.json`` when the signal hit
``ray.wait``).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from mdf.errors import Terminated

_state = {"installed": False, "received": False}


def _message() -> str:
    return f"terminated by signal {signal.SIGTERM.name}"


def _handler(signum: int, frame: FrameType | None) -> None:
    _state["received"] = True
    raise Terminated(_message())


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()  # only the main thread may set a handler


@contextmanager
def handling_sigterm() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` in the main thread while the block runs; the previous handler after."""
    if not _main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _handler)
    _state.update(installed=True, received=False)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        _state["installed"] = False


def reclaim() -> None:
    """Put mdf's handler back after a library (``ray.init``) replaced it, when ``mdf run`` had installed it."""
    if _state["installed"] and _main_thread():
        signal.signal(signal.SIGTERM, _handler)


def as_terminated(exc: BaseException) -> Terminated | None:
    """``exc`` as the :class:`Terminated` it stands for, or ``None`` when no SIGTERM ended the run: recorded by
    mdf's handler, or Ray's driver handler's ``SystemExit(15)`` when a library caller kept Ray's."""
    if isinstance(exc, Terminated):
        return exc
    if _state["received"] or (isinstance(exc, SystemExit) and exc.code == signal.SIGTERM):
        return Terminated(_message())
    return None
