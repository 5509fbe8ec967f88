"""Text from data, made safe for the terminal: never Rich markup, never an escape sequence.

Reasons, file names, operator and column names reach the end-of-run table and the closing lines from the data
(a WARC ``Content-Encoding`` value, a JSONL key, a file called ``[red]x.jsonl``) or from a recipe. Printed as it
is, ``[blink]`` would be read as Rich markup and ``ESC [2J`` would clear the screen. :func:`shown` escapes the
markup and replaces every control character by its visible ``\\x..`` form; :func:`safe_metrics` applies it to
every field of a run's metrics that the table prints, so the table's own markup keeps working.
"""

from __future__ import annotations

import copy
import dataclasses

from mdf.errors import plain
from mdf.metrics import RunMetrics
from mdf.storage.redact import redact_text


def shown(text: object) -> str:
    """``text`` to print with Rich: control characters visible (:func:`plain`) and markup escaped.

    A URL in it loses its credentials (:func:`mdf.storage.redact.redact_text`). rich is imported here, not at
    the top: ``mdf run -q`` imports this module and prints nothing (~12 ms)."""
    from rich.markup import escape

    return escape(plain(redact_text(str(text))))


def safe_metrics(m: RunMetrics) -> RunMetrics:
    """A copy of ``m`` whose printed text (stage, operator and executor names, reasons, damaged-input files and
    errors) is :func:`shown`; counts and times are shared."""
    out = copy.copy(m)
    out.executor = shown(m.executor)
    out.reader_reasons = {shown(k): v for k, v in m.reader_reasons.items()}
    out.damaged = [
        dataclasses.replace(d, file=None if d.file is None else shown(d.file), error=shown(d.error)) for d in m.damaged
    ]
    out.stages = [
        dataclasses.replace(
            s,
            name=shown(s.name),
            operators=[
                dataclasses.replace(op, name=shown(op.name), reasons={shown(k): v for k, v in op.reasons.items()})
                for op in s.operators
            ],
        )
        for s in m.stages
    ]
    out.key_state = {shown(k): v for k, v in m.key_state.items()}
    return out
