"""Batch-size optimizer (the seed's "partition size" rules; a partition there is a batch here): size batches
from the data itself, and say why.

Too-large batches run a worker out of memory on an image set; too-small ones drown the driver in scheduling.
The rules are Data-Juicer's (modality multipliers, memory tiers, P90, safety margin, byte bounds, skew cut,
minimum batches, workers), applied to better evidence: a row's real Arrow payload bytes rather than
``characters x 2``, rows drawn at random across all shards rather than the head of the data, and optionally
the pipeline itself timed and weighed on the sample (``mdf plan --measure``).

Pure Python over pyarrow and numpy; no Ray import. Entry points:

* :func:`plan_batches` - the whole plan (``mdf plan`` prints it).
* :func:`resolve_auto` - ``(batch_rows, max_in_flight)`` for ``executor.batch_rows: auto`` in ``prepare()``.
* :func:`decide` - the arithmetic alone, from a :class:`DataProfile` and :class:`Resources`.

Nothing here guesses what the data is from its bytes: the reader declares what its batches hold
(:attr:`mdf.Reader.modality`, or the Parquet reader's ``modality`` parameter) and each operator what it decodes
(:attr:`mdf.Operator.modality`) and costs (:attr:`mdf.Operator.cost_class`); the heaviest declared modality
sizes the batches and ``mdf plan`` names who declared it. Modalities and cost classes are registered classes
(:mod:`mdf.profiles`), so a plugin adds its own without editing core.
"""

from mdf.batching.decide import BatchPlan, DataProfile, OperatorCost, Resources, decide
from mdf.batching.measure import StageCost, measure_stages
from mdf.batching.payload import row_payload_bytes
from mdf.batching.planner import (
    declared_modality,
    operator_costs,
    plan_batches,
    resolve_auto,
    system_resources,
)
from mdf.batching.rules import Rule
from mdf.batching.sample import Sample, draw_sample

__all__ = [
    "BatchPlan",
    "DataProfile",
    "OperatorCost",
    "Resources",
    "Rule",
    "Sample",
    "StageCost",
    "decide",
    "declared_modality",
    "draw_sample",
    "measure_stages",
    "operator_costs",
    "plan_batches",
    "resolve_auto",
    "row_payload_bytes",
    "system_resources",
]
