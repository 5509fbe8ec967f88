"""``mdf plan RECIPE [--json] [--measure] [--cluster CPUS[,GPUS]]``: the batch size, workers and replicas mdf would
choose, and why; with ``--cluster``, the projected throughput on that cluster (see :mod:`mdf.projection`)."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from mdf.batching import BatchPlan, plan_batches
from mdf.cli.cluster import measured_for, parse_cluster, show
from mdf.io.sharding import take_notes
from mdf.plugins import load_plugins
from mdf.resolve import build_component, load_recipe

# Rules that set batch_rows, latest first: the reason shown is the last one that fired.
_ROW_RULES = ("fixed_batch_rows", "min_batches", "modality_max_rows", "target_rows", "default_rows")
_BYTE_RULES = ("max_concurrent_share", "max_share_of_memory", "max_batch_bytes", "min_batch_bytes", "skew_cut")


@click.command("plan")
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help="override a recipe key")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
@click.option("--measure", is_flag=True, help="run the stages on the sample (inline) and use their measured cost")
@click.option("--memory-gb", type=float, default=None, help="plan for this much available memory [MemAvailable]")
@click.option("--cores", type=click.IntRange(min=1), default=None, help="plan for this many cores [this machine's]")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the random sample")
@click.option("--cluster", metavar="CPUS[,GPUS]", help="project throughput and time on a cluster of this size")
def command(
    recipe: str,
    overrides: tuple[str, ...],
    as_json: bool,
    measure: bool,
    memory_gb: float | None,
    cores: int | None,
    seed: int,
    cluster: str | None,
) -> None:
    """Sample RECIPE's input and print the batch size, batches, workers and replicas it would get."""
    plugins = load_plugins()
    parsed = load_recipe(recipe, list(overrides), plugins)
    shape = parse_cluster(cluster) if cluster else None
    reader = build_component(plugins.readers, parsed.reader, "reader")
    shards = reader.shards()
    for note in take_notes():  # a skipped symlink loop, a file named twice (stderr: --json stays clean)
        click.echo(f"input: {note}", err=True)
    plan = plan_batches(
        reader,
        shards,
        parsed,
        plugins,
        available_bytes=memory_gb * (1 << 30) if memory_gb is not None else None,
        cores=cores,
        measure=measure or (shape is not None),
        seed=seed,
    )
    if shape is not None:  # the scale-out projection instead of the batch plan
        show(measured_for(parsed, plan.measured, plan.batch_rows), *shape, as_json)
        return
    set_rows = parsed.executor.batch_rows if "batch_rows" in parsed.executor.model_fields_set else "auto"
    if as_json:
        click.echo(json.dumps({**plan.to_json(), "recipe_batch_rows": set_rows}, indent=2))
        return
    Console(width=max(Console().width, 140)).print(_table(plan, recipe))
    if set_rows != "auto":
        click.echo(f"note: the recipe sets batch_rows: {set_rows}; set it to auto to use {plan.batch_rows:,}")


def _reason(plan: BatchPlan, *names: str, default: str = "") -> str:
    for name in names:
        rule = plan.rule(name)
        if rule is not None:
            return rule.reason
    return default


def _table(plan: BatchPlan, recipe: str) -> Table:
    table = Table(title=f"batch plan for {recipe}", title_justify="left")
    for col in ("choice", "value", "why"):
        table.add_column(col)
    res = plan.resources
    rows = [
        ("modality", str(plan.modality), _reason(plan, "modality")),
        ("rows_total", f"{plan.rows_total:,}", _reason(plan, "estimated_total", default="from Parquet footers")),
        ("rows_sampled", f"{plan.rows_sampled:,}", _reason(plan, "cluster_sample", "sampling")),
        ("p90_bytes", f"{plan.p90_bytes:,.0f}", _reason(plan, "payload_p90")),
        ("seed_estimate_bytes", f"{plan.seed_estimate_bytes:,.0f}", _reason(plan, "seed_comparison")),
        ("row_memory", f"{plan.row_memory_bytes:,.0f} B", _reason(plan, "measured_amplification", "row_memory")),
        ("complexity", f"{plan.complexity:g}", _reason(plan, "complexity")),
        ("skew", f"{plan.skew:.2f}", _reason(plan, "skew_cut", default="<= 0.7: no cut")),
        ("tier_mb", f"{plan.tier_mb}", f"{res.available_bytes / (1 << 30):.1f} GB available"),
        ("batch_mb", f"{plan.batch_bytes / (1 << 20):g}", _reason(plan, *_BYTE_RULES, default="= tier")),
        ("batch_rows", f"{plan.batch_rows:,}", _reason(plan, *_ROW_RULES)),
        ("batches", f"{plan.batches:,}", f"every shard cut into batches of {plan.batch_rows:,} rows"),
        ("workers", f"{plan.workers}", _reason(plan, "workers")),
        ("max_in_flight", f"{plan.max_in_flight}", _reason(plan, "max_in_flight")),
        ("replicas", ", ".join(f"{k}={v}" for k, v in plan.replicas.items()), _reason(plan, "replicas")),
    ]
    for name, value, why in rows:
        table.add_row(name, value, why)
    for cost in plan.measured:
        m = cost.to_json()
        table.add_row(
            f"measured {cost.name}",
            f"{m['us_per_row']} us/row",
            f"{m['rows_in']:,} rows in, peak growth {m['peak_growth_per_row_bytes']:,} B/row, x{m['amplification']}",
        )
    for name in ("referenced_files", "row_group_too_big"):
        if plan.rule(name):
            table.add_row(name, "", _reason(plan, name))
    return table
