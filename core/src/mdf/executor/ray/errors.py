"""One line for a failure on Ray; the long story goes to the run's log file.

An operator's exception arrives wrapped in a ``RayTaskError`` whose text is the remote stack trace (~40 lines).
:func:`local_error` unwraps it into the exception the operator raised, writes the remote traceback to
``<output>/_mdf/run.log`` and says so in the one line, as the inline executor's one line reads.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from mdf import layout
from mdf.errors import MdfError, OperatorError

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def local_error(exc: BaseException, output: str) -> BaseException:
    """``exc`` as the user should see it: a Ray task/actor error becomes the cause's own one-line error."""
    try:
        import ray.exceptions as rex
    except ImportError:  # pragma: no cover - ray is a dependency of mdf-core
        return exc
    if not isinstance(exc, rex.RayError):
        return exc
    log = _log(exc, output)
    where = f" (remote traceback in {log})" if log else ""
    cause = getattr(exc, "cause", None)
    if isinstance(exc, rex.RayTaskError) and isinstance(cause, rex.RayError):  # a node or actor lost under a task:
        exc, cause = cause, None  # Ray's own error (its RayTaskError(ActorUnavailableError) has no function_name)
    if isinstance(exc, rex.RayTaskError) and isinstance(cause, MdfError):
        err = type(cause).__new__(type(cause))
        Exception.__init__(err, f"{cause}{where}")
        return err
    if isinstance(exc, rex.RayTaskError) and cause is not None:
        name = getattr(exc, "function_name", None) or "a Ray task"
        return OperatorError(f"{name} failed: {type(cause).__name__}: {cause}{where}")
    first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return OperatorError(f"Ray: {type(exc).__name__}: {first}{where}")


def _log(exc: BaseException, output: str) -> Path | None:
    """Append the full remote error to the run's log file; ``None`` when it cannot be written."""
    path = layout.log_path(output)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as f:
            text = _ANSI.sub("", str(exc))  # Ray colours its remote frames for a terminal
            f.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {type(exc).__name__}\n{text}\n")
    except OSError:
        return None
    return path
