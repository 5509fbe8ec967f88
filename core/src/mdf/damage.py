"""Damaged input seen by the driver: listed in metrics and the end-of-run table, or fatal under ``--strict``.

A reader turns damage into one ``reader:damaged_input`` row (:func:`mdf.io.base.damaged_input_batch`) that goes
to ``rejected:`` like any bad record. The executors hand every batch of reader rejections to :func:`note_damage`
(on Ray the loader extracts the entries, so the driver never sees rows), which records file, offset and error
for ``metrics.json`` and the table, and with ``on_damaged_input: fail`` stops the run on the first one.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc

from mdf.errors import MdfError
from mdf.io.base import DAMAGED_INPUT
from mdf.metrics import REASON, RunMetrics
from mdf.run_stats import DamagedInput


class DamagedInputError(MdfError):
    """Damaged input under ``on_damaged_input: fail`` (``mdf run --strict``): exit 1, naming the file."""


def damaged_entries(rejected: pa.RecordBatch | None) -> list[DamagedInput]:
    """File, offset and error of each damaged-input row in a batch of reader rejections."""
    if rejected is None or REASON not in rejected.schema.names or "_raw" not in rejected.schema.names:
        return []
    mask = pc.fill_null(pc.equal(rejected.column(REASON), DAMAGED_INPUT), False)
    if not pc.any(mask).as_py():
        return []
    out = []
    for raw in pc.filter(rejected.column("_raw"), mask).to_pylist():
        try:
            entry = json.loads(raw)
            out.append(DamagedInput(entry.get("file"), entry.get("offset"), str(entry.get("error"))))
        except (TypeError, ValueError, AttributeError):  # not the JSON object damaged_input_batch writes
            out.append(DamagedInput(None, None, str(raw)))
    return out


def note_damage(metrics: RunMetrics, entries: list[DamagedInput] | None, fail: bool) -> None:
    """Record damaged files on the run's metrics; raise :class:`DamagedInputError` when the recipe says fail."""
    if not entries:
        return
    metrics.damaged.extend(entries)
    if fail:
        raise DamagedInputError(
            f"damaged input: {entries[0].describe()} (stopped by on_damaged_input: fail / --strict; without it "
            f"the rows before the damage are kept and the damage is a '{DAMAGED_INPUT}' row in rejected)"
        )
