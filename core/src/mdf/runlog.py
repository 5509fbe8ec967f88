"""The run's log file, ``<output>/_mdf/run.log``: what a run did and what its libraries said, off the terminal.

While the run runs, :mod:`faulthandler` writes there too: a crash in native code (SIGSEGV, ...) leaves every
thread's Python stack at the end of the file, and the next command on the output says the run crashed
(:mod:`mdf.crash`).

The terminal gets mdf's own lines (the executor chosen, progress, the table, where things are). Everything a
person may need later goes to the file instead: the run's start and end, its fingerprint and plan, Python
warnings raised during the run (``logging.captureWarnings``), Ray's driver-side messages (its token and
start-up warnings, once :func:`adopt` hands the ``ray`` logger to the file), and the full traceback of a
failure whose one-line form the user saw. Every run writes it, so the closing line ``log: ...`` always points
at a file, and an appended ``--resume`` keeps the story of each attempt.

Ray's C++ core worker writes to file descriptor 2 directly, below Python's logging, so no handler here can
catch it; those lines are kept quiet at their cause instead (see :mod:`mdf.state.service`).
"""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from mdf.storage.redact import redact_text

LOG = logging.getLogger("mdf")
FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"

_active: logging.Handler | None = None
_saved: list[tuple[logging.Logger, int, bool, list[logging.Handler]]] = []
_owned: list[logging.Handler] = []  # handlers opened by adopt(), closed with the run log
last_path: Path | None = None
"""The log file of the latest run in this process: named by the CLI's one line for an unexpected error."""


class _UTC(logging.Formatter):
    """UTC times; every URL in a line (ours, a library's, a traceback's) without its credentials."""

    converter = time.gmtime

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(super().format(record))

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", self.converter(record.created)) + f".{int(record.msecs):03d}Z"


@contextlib.contextmanager
def run_log(path: Path) -> Iterator[Path]:
    """Send the ``mdf`` logger and Python warnings to ``path`` (appended) for the duration of a run."""
    global _active, last_path
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(_UTC(FORMAT))
    _active, last_path = handler, path
    adopt("mdf")
    adopt("py.warnings")
    logging.captureWarnings(True)
    had_faulthandler = faulthandler.is_enabled()  # pytest's, say: put back after the run
    faulthandler.enable(file=handler.stream, all_threads=True)  # a crash's stacks to this file (mdf.crash)
    try:
        yield path
    finally:
        faulthandler.disable()
        if had_faulthandler and sys.__stderr__ is not None:
            with contextlib.suppress(ValueError, OSError):
                faulthandler.enable(file=sys.__stderr__)
        logging.captureWarnings(False)
        for logger, level, propagate, handlers in reversed(_saved):
            logger.handlers[:] = handlers
            logger.setLevel(level)
            logger.propagate = propagate
        _saved.clear()
        for extra in _owned:
            extra.close()
        _owned.clear()
        _active = None
        handler.close()


def adopt(name: str) -> bool:
    """While a run log is open, the logger ``name`` writes to it only (INFO and up), not to the terminal.

    Returns ``False`` when no run log is open (the logger is left as it is), so a caller such as the Ray
    connection knows whether it must quiet the library itself. A library logger gets a handler of its own on
    the same file (appends interleave by line): Ray's ``init`` re-formats every handler of its logger."""
    if _active is None:
        return False
    logger = logging.getLogger(name)
    if any(saved[0] is logger for saved in _saved):
        return True
    _saved.append((logger, logger.level, logger.propagate, list(logger.handlers)))
    handler = _active
    if name not in ("mdf", "py.warnings"):
        handler = logging.FileHandler(_active.baseFilename, encoding="utf-8")
        handler.setFormatter(_UTC(FORMAT))
        _owned.append(handler)
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return True
