"""Plan a recipe's partitions: sample its input, read the machine, apply the rules; ``resolve_auto`` for prepare().

This is the part that touches files and the system; the arithmetic is in :mod:`mdf.partition.decide`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from mdf.io.base import Reader, Shard
from mdf.partition.decide import DataProfile, OperatorCost, PartitionPlan, Resources, decide
from mdf.partition.payload import detect_modality
from mdf.partition.rules import Modality, Rule, operator_weight, p90, skew
from mdf.partition.sample import Sample, draw_sample
from mdf.plugins import Plugins, load_plugins
from mdf.recipe import Recipe

if TYPE_CHECKING:
    from mdf.executor.plan import Plan


def available_memory_bytes() -> int:
    """MemAvailable from /proc/meminfo (what can be used without swapping), else physical memory."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30  # no way to know: assume a small machine


def system_resources(available_bytes: float | None = None, cores: int | None = None) -> Resources:
    """This machine's resources; either can be given instead (tests, or planning for another machine)."""
    return Resources(
        available_bytes if available_bytes is not None else available_memory_bytes(),
        cores if cores is not None else (os.cpu_count() or 1),
    )


def operator_costs(recipe: Recipe, plugins: Plugins) -> list[OperatorCost]:
    """Each operator's complexity weight, from its class alone (nothing is constructed).

    :attr:`mdf.Operator.cost_class` ``"model"`` or ``"embedding"`` weighs 0.3, ``"filter"`` 0.2, ``"cleaning"``
    0.1; without it, ``kind`` decides (``filter`` and ``deduplicator`` 0.2, ``refiner`` 0.1).
    """
    out = []
    for i, stage in enumerate(recipe.stages):
        for j, spec in enumerate(stage.operators):
            cls = plugins.operators.get(spec.name, f"stages[{i}].operators[{j}]")
            weight = operator_weight(cls.kind, cls.cost_class)
            out.append(OperatorCost(stage.name, spec.name, weight))
    return out


def declared_modality(recipe: Recipe, plugins: Plugins) -> tuple[Modality | None, list[str]]:
    """The modality the recipe's operators declare (:attr:`mdf.Operator.modality`) and who declares media.

    ``None`` when no operator says: then the planner looks at the sampled bytes instead."""
    kinds: dict[str, list[str]] = {}
    for i, stage in enumerate(recipe.stages):
        for j, spec in enumerate(stage.operators):
            cls = plugins.operators.get(spec.name, f"stages[{i}].operators[{j}]")
            if cls.modality is not None:
                kinds.setdefault(cls.modality, []).append(spec.name)
    media = {k: v for k, v in kinds.items() if k != "text"}
    if not kinds:
        return None, []
    if not media:
        return Modality.TEXT, kinds["text"]
    names = [n for v in media.values() for n in v]
    return (Modality(next(iter(media))) if len(media) == 1 else Modality.MULTIMODAL), names


def profile_sample(
    sample: Sample, shards: list[Shard], declared: tuple[Modality | None, list[str]] = (None, [])
) -> tuple[DataProfile, list[Rule]]:
    """Reduce a sample to the numbers the rules need; notes on referenced media files become rules.

    The modality is what the operators declare (``declared``); only a recipe whose operators declare none has
    its sample's columns inspected (magic bytes, file extensions)."""
    if declared[0] is not None:
        modality, media = declared[0], {}
    elif sample.table is not None:
        modality, media = detect_modality(sample.table)
    else:
        modality, media = Modality.TEXT, {}
    rules: list[Rule] = []
    files = sample.files
    if files.found or files.missing or files.remote:
        rules.append(
            Rule(
                "referenced_files",
                f"paths in the data name media files: {files.found} sized, {files.missing} not found"
                f" {files.examples_missing}, {files.remote} remote (not counted)",
                {"found": files.found, "missing": files.missing, "remote": files.remote},
            )
        )
    bytes_ = sample.row_bytes
    mean_chars = float(np.mean(sample.text_chars)) if len(sample.text_chars) else 0.0
    if all(s.rows is not None for s in shards):
        shard_rows = [s.rows or 0 for s in shards]
    else:  # unsized input: share the (estimated) total by file size
        size = sum(s.size for s in shards) or 1
        shard_rows = [round(sample.rows_total * s.size / size) for s in shards]
    profile = DataProfile(
        modality=modality,
        rows_total=sample.rows_total,
        rows_sampled=sample.rows_sampled,
        p90_bytes=p90(bytes_),
        mean_bytes=float(np.mean(bytes_)) if len(bytes_) else 0.0,
        skew=skew(bytes_),
        seed_estimate_bytes=mean_chars * 2.0,
        shard_rows=shard_rows,
        media_columns=media,
        declared_by=declared[1] if declared[0] is not None else [],
        largest_row_group=sample.largest_row_group,
    )
    return profile, rules


def plan_partitions(
    reader: Reader,
    shards: list[Shard],
    recipe: Recipe,
    plugins: Plugins | None = None,
    *,
    available_bytes: float | None = None,
    cores: int | None = None,
    measure: bool = False,
    seed: int = 0,
    batch_rows: int | None = None,
) -> PartitionPlan:
    """Sample the input, optionally run the stages on the sample, and choose every size.

    :param available_bytes: memory to plan for (default: this machine's MemAvailable).
    :param cores: cores to plan for (default: ``os.cpu_count()``).
    :param measure: run the recipe's operators on the sample (inline) and use what they cost.
    :param seed: seed of the random draw; the same seed and input give the same plan.
    :param batch_rows: a batch size fixed by the recipe: kept, and the other numbers derived from it.
    """
    plugins = plugins or load_plugins()
    sample = draw_sample(reader, shards, seed=seed)
    profile, notes = profile_sample(sample, shards, declared_modality(recipe, plugins))
    measured = []
    if measure and sample.table is not None and sample.table.num_rows:
        from mdf.partition.measure import measure_stages

        measured = measure_stages(recipe, plugins, sample.table)
    return decide(
        profile,
        system_resources(available_bytes, cores),
        operator_costs(recipe, plugins),
        [s.name for s in recipe.stages],
        measured=measured,
        fixed_batch_rows=batch_rows,
        rules=[*sample.rules, *notes],
    )


def resolve_auto(
    plan: Plan,
    recipe: Recipe,
    *,
    available_bytes: float | None = None,
    cores: int | None = None,
    seed: int = 0,
) -> tuple[int, int]:
    """``(batch_rows, max_in_flight)`` for a prepared plan: the recipe's value where it is a number, else planned.

    Called by ``prepare()`` when ``executor.batch_rows`` or ``executor.max_in_flight`` is ``"auto"``. With a
    numeric ``batch_rows``, ``max_in_flight`` is derived from that batch size.
    """
    rows = recipe.executor.batch_rows
    in_flight = getattr(recipe.executor, "max_in_flight", "auto")
    result = plan_partitions(
        plan.reader,
        plan.shards,
        recipe,
        plan.plugins,
        available_bytes=available_bytes,
        cores=cores,
        seed=seed,
        batch_rows=rows if isinstance(rows, int) else None,
    )
    plan.partition = result.to_json()  # the run report shows the choice and its rules
    return result.batch_rows, in_flight if isinstance(in_flight, int) else result.max_in_flight
