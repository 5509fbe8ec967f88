"""SIGTERM and SIGHUP end a run the way ``^C`` does, on every executor: its folders are released, ``run.json``
says ``failed`` with the reason, and ``mdf run`` exits ``128 + signal`` (143, 129) with one line saying
``--resume`` continues it. SIGHUP is what a closed terminal or a dropped SSH session sends: its default action
killed the run on the spot and left ``run.json`` ``running``. (SIGKILL and a crash such as SIGSEGV run no Python
at all: :mod:`mdf.crash` is how the next command tells.)

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

SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_state: dict[str, object] = {"installed": False, "received": None}  # received: the signal that came, or None


def _terminated(signum: int) -> Terminated:
    exc = Terminated(f"terminated by signal {signal.Signals(signum).name}")
    exc.signum = signum
    return exc


def _handler(signum: int, frame: FrameType | None) -> None:
    _state["received"] = signum
    raise _terminated(signum)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()  # only the main thread may set a handler


@contextmanager
def handling_sigterm() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Terminated` in the main thread while the block runs; the previous
    handlers after."""
    if not _main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _handler) for signum in SIGNALS}
    _state.update(installed=True, received=None)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _state["installed"] = False


def reclaim() -> None:
    """Put mdf's handlers back after a library (``ray.init``) replaced them, when ``mdf run`` had installed them."""
    if _state["installed"] and _main_thread():
        for signum in SIGNALS:
            signal.signal(signum, _handler)


def as_terminated(exc: BaseException) -> Terminated | None:
    """``exc`` as the :class:`Terminated` it stands for, or ``None`` when no SIGTERM or SIGHUP ended the run:
    recorded by mdf's handler, or Ray's driver handler's ``SystemExit(15)`` when a library caller kept Ray's."""
    if isinstance(exc, Terminated):
        return exc
    received = _state["received"]
    if isinstance(received, int):
        return _terminated(received)
    if isinstance(exc, SystemExit) and exc.code == signal.SIGTERM:
        return _terminated(signal.SIGTERM)
    return None
