"""Damaged input seen by the driver: listed in metrics and the end-of-run table, or fatal under ``--strict``.

A reader turns damage into one ``reader:damaged_input`` row (:func:`mdf.io.base.damaged_input_batch`) that goes
to ``rejected:`` like any bad record. The shard loop's read step (:func:`mdf.executor.batches.shard_batches`, in
the worker that reads, so the driver never sees rows) extracts file, offset and error with
:func:`damaged_entries`; they travel with the batch's counts to ``metrics.json`` and the table, and with
``on_damaged_input: fail`` :func:`refuse_damage` stops the run on the first one before its batch goes further.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc

from mdf.errors import MdfError
from mdf.io.base import DAMAGED_INPUT
from mdf.metrics import REASON
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


def refuse_damage(entries: list[DamagedInput]) -> None:
    """Raise :class:`DamagedInputError` naming the first damaged file, if any (``on_damaged_input: fail``)."""
    if entries:
        raise DamagedInputError(
            f"damaged input: {entries[0].describe()} (stopped by on_damaged_input: fail / --strict; without it "
            f"the rows before the damage are kept and the damage is a '{DAMAGED_INPUT}' row in rejected)"
        )
