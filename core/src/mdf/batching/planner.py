"""Plan a recipe's batches: sample its input, read the machine, apply the rules; ``resolve_auto`` for prepare().

This is the part that touches files and the system; the arithmetic is in :mod:`mdf.batching.decide`. What the
data *is* (its modality) and what each operator costs come from declarations, the reader's and the operators'
(:func:`declared_modality`, :func:`operator_costs`); the sample says only how many bytes a row holds.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from mdf.batching.decide import BatchPlan, DataProfile, OperatorCost, Resources, decide
from mdf.batching.rules import Rule, p90, skew
from mdf.batching.sample import Sample, draw_sample
from mdf.checks import declared as reads_of
from mdf.cpus import usable_cores
from mdf.io.base import Reader, Shard
from mdf.operators import is_declared
from mdf.plugin_set import Plugins
from mdf.plugins import load_plugins
from mdf.profiles import Modality
from mdf.recipe import Recipe

if TYPE_CHECKING:
    from mdf.plan import Plan


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
        cores if cores is not None else usable_cores(),
    )


def operator_costs(recipe: Recipe, plugins: Plugins) -> list[OperatorCost]:
    """Each operator's complexity weight: the weight of the cost class it declares (:attr:`mdf.Operator.cost_class`,
    its kind's default unless it says otherwise), from its class alone (nothing is constructed)."""
    out = []
    for i, stage in enumerate(recipe.stages):
        for j, spec in enumerate(stage.operators):
            path = f"stages[{i}].operators[{j}]"
            cls = plugins.operators.get(spec.name, path)
            weight = plugins.cost_classes.get(cls.cost_class, path).weight
            out.append(OperatorCost(stage.name, spec.name, weight))
    return out


def declared_modality(reader: Reader, recipe: Recipe, plugins: Plugins) -> tuple[type[Modality], list[str], str]:
    """The modality to size batches for, who declared it, and a note: the heaviest the reader and the
    recipe's operators declare (:attr:`mdf.Reader.modality`, :attr:`mdf.Operator.modality`), ``text`` when
    none does. An operator left at the base class's ``text`` does not count as declaring it."""
    declared: list[tuple[str, type[Modality]]] = []
    if (name := reader.output_modality()) is not None:
        declared.append((f"reader {reader.name}", plugins.modalities.get(name, "reader.modality")))
    for i, stage in enumerate(recipe.stages):
        for j, spec in enumerate(stage.operators):
            path = f"stages[{i}].operators[{j}]"
            cls = plugins.operators.get(spec.name, path)
            if is_declared(cls, "modality"):
                declared.append((spec.name, plugins.modalities.get(cls.modality, path)))
    if not declared:
        hint = "; set reader modality (e.g. image) if a column holds encoded media"
        note = f"nothing declares a modality: reader {reader.name} does not say and no operator decodes media"
        return plugins.modalities.get("text"), [], note + (hint if "modality" in reader.Params.model_fields else "")
    top = max((m for _, m in declared), key=lambda m: m.heaviness())
    by = list(dict.fromkeys(who for who, m in declared if m is top))
    lighter = [f"{m.name} ({who})" for who, m in declared if m is not top]
    return top, by, f"lighter: {', '.join(lighter)}" if lighter else ""


def path_columns(recipe: Recipe, plugins: Plugins) -> list[str]:
    """Columns an operator declares it reads as ``path`` (a file it loads): their files' sizes are row bytes."""
    out: list[str] = []
    for stage in recipe.stages:
        for spec in stage.operators:
            cls = plugins.operators.get(spec.name)
            for _, column, types in reads_of(cls, cls.Params(**spec.params), "reads"):
                if "path" in (t.strip() for t in types.split("|")):
                    out.append(column)
    return list(dict.fromkeys(out))


def profile_sample(
    sample: Sample, shards: list[Shard], declared: tuple[type[Modality], list[str], str]
) -> tuple[DataProfile, list[Rule]]:
    """Reduce a sample to the numbers the rules need; notes on referenced files become rules.

    The modality is what the reader and operators declare (``declared``, see :func:`declared_modality`); the
    sample gives only bytes."""
    modality, declared_by, note = declared
    rules: list[Rule] = []
    files = sample.files
    if files.found or files.missing or files.remote:
        rules.append(
            Rule(
                "referenced_files",
                f"path columns name files: {files.found} sized, {files.missing} not found"
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
        declared_by=declared_by,
        modality_note=note,
        largest_row_group=sample.largest_row_group,
    )
    return profile, rules


def plan_batches(
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
) -> BatchPlan:
    """Sample the input, optionally run the stages on the sample, and choose every size.

    :param available_bytes: memory to plan for (default: this machine's MemAvailable).
    :param cores: cores to plan for (default: :func:`mdf.cpus.usable_cores`).
    :param measure: run the recipe's operators on the sample (inline) and use what they cost.
    :param seed: seed of the random draw; the same seed and input give the same plan.
    :param batch_rows: a batch size fixed by the recipe: kept, and the other numbers derived from it.
    """
    plugins = plugins or load_plugins()
    declared = declared_modality(reader, recipe, plugins)
    sample = draw_sample(reader, shards, seed=seed, path_columns=path_columns(recipe, plugins))
    profile, notes = profile_sample(sample, shards, declared)
    measured = []
    if measure and sample.table is not None and sample.table.num_rows:
        from mdf.batching.measure import measure_stages

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

    Called by ``prepare()`` when ``executor.batch_rows`` is ``"auto"``. With a numeric ``batch_rows``,
    ``max_in_flight`` is derived from that batch size. ``max_in_flight`` is the planner's suggestion: an executor
    with a bound of its own in its parameters (Ray's ``executor.max_in_flight``) uses that one instead.
    """
    rows = recipe.executor.batch_rows
    result = plan_batches(
        plan.reader,
        plan.shards,
        recipe,
        plan.plugins,
        available_bytes=available_bytes,
        cores=cores,
        seed=seed,
        batch_rows=rows if isinstance(rows, int) else None,
    )
    plan.batch_plan = result.to_json()  # the run report shows the choice and its rules
    return result.batch_rows, result.max_in_flight
