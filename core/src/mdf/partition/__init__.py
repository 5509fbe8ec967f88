"""Partition (batch) size optimizer: size batches from the data itself, and say why.

Too-large batches run a worker out of memory on an image set; too-small ones drown the driver in scheduling.
The rules are Data-Juicer's (modality multipliers, memory tiers, P90, safety margin, byte bounds, skew cut,
minimum partitions, workers), applied to better evidence: a row's real Arrow payload bytes rather than
``characters x 2``, rows drawn at random across all shards rather than the head of the data, and optionally
the pipeline itself timed and weighed on the sample (``mdf plan --measure``).

Pure Python over pyarrow and numpy; no Ray import. Entry points:

* :func:`plan_partitions` - the whole plan (``mdf plan`` prints it).
* :func:`resolve_auto` - ``(batch_rows, max_in_flight)`` for ``executor.batch_rows: auto`` in ``prepare()``.
* :func:`decide` - the arithmetic alone, from a :class:`DataProfile` and :class:`Resources`.

Operators may declare ``cost_class = "model"`` (or ``"embedding"``, ``"filter"``, ``"cleaning"``) as a class
attribute when their ``kind`` understates their cost; see :func:`operator_costs`.
"""

from mdf.partition.decide import DataProfile, OperatorCost, PartitionPlan, Resources, decide
from mdf.partition.measure import StageCost, measure_stages
from mdf.partition.payload import detect_modality, row_payload_bytes
from mdf.partition.planner import operator_costs, plan_partitions, resolve_auto, system_resources
from mdf.partition.rules import MODALITIES, Modality, ModalityConfig, Rule
from mdf.partition.sample import Sample, draw_sample

__all__ = [
    "MODALITIES",
    "DataProfile",
    "Modality",
    "ModalityConfig",
    "OperatorCost",
    "PartitionPlan",
    "Resources",
    "Rule",
    "Sample",
    "StageCost",
    "decide",
    "detect_modality",
    "draw_sample",
    "measure_stages",
    "operator_costs",
    "plan_partitions",
    "resolve_auto",
    "row_payload_bytes",
    "system_resources",
]
