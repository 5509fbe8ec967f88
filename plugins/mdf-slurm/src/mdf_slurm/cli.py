"""``mdf slurm run RECIPE (--nodes N | --array N)`` and ``mdf slurm status RUN``.

Added to ``mdf`` through ``mdf_register_commands`` (by reference: a run imports none of this). Checks run
before submission, in this order, each failing in one line with exit 2 and nothing submitted: the recipe (as
the jobs will run it), then Slurm (``sbatch`` on PATH, the controller answering, the partition). ``--dry-run``
prints the scripts and the ``sbatch`` lines and writes nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from mdf import MdfError

from . import recipes, runs, scripts
from .slurm import Slurm, SlurmError


@click.group("slurm")
def command() -> None:
    """Run a recipe on Slurm: across one allocation (Ray inside it) or as a job array."""


@command.command("run")
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--nodes", type=click.IntRange(min=1), help="allocation mode: one job on N nodes, Ray across them")
@click.option("--array", "tasks", type=click.IntRange(min=1), help="array mode: N array tasks, each a slice of shards")
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help="override a recipe key")
@click.option("--partition", "-p", help="Slurm partition [the cluster's default]")
@click.option("--time", "-t", "time_limit", help="time limit of each job (Slurm's formats: 90, 1:30:00, 2-0)")
@click.option("--account", "-A", help="account to charge")
@click.option("--cpus-per-task", type=click.IntRange(min=1), help="array mode: CPUs of each task [Slurm's default]")
@click.option("--sbatch-arg", "sbatch_args", multiple=True, metavar="ARG", help="more #SBATCH options (repeatable)")
@click.option("--ray-start-args", default="", help="allocation mode: more `ray start` options on every node")
@click.option("--resume", is_flag=True, help="continue: array mode resubmits only shards without a completion record")
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path), help="folder for scripts and logs")
@click.option("--dry-run", is_flag=True, help="print the scripts and sbatch lines; submit nothing")
def run(
    recipe: str,
    nodes: int | None,
    tasks: int | None,
    overrides: tuple[str, ...],
    partition: str | None,
    time_limit: str | None,
    account: str | None,
    cpus_per_task: int | None,
    sbatch_args: tuple[str, ...],
    ray_start_args: str,
    resume: bool,
    run_dir: Path | None,
    dry_run: bool,
) -> None:
    """Submit RECIPE to Slurm: --nodes N (one allocation, Ray inside it; everything a recipe does on Ray) or
    --array N (N tasks, each an inline run of a slice of shards; recipes without state across shards)."""
    if (nodes is None) == (tasks is None):
        raise click.UsageError("give exactly one of --nodes N (allocation mode) or --array N (array mode)")
    path = Path(recipe).absolute()
    sets = list(overrides)
    if nodes is not None:
        output = recipes.check_allocation(path, [*sets, *(["executor.resume=true"] if resume else [])])
        slices = None
    else:
        slices = recipes.check_array(path, sets, resume)
        output = slices.output
    slurm = Slurm()
    if not dry_run:
        slurm.command("sbatch")
        slurm.check_partition(partition)
    folder = runs.new_folder(run_dir, path) if not dry_run else (run_dir or Path("mdf-slurm") / "DRY-RUN").absolute()
    job = scripts.Job(f"mdf-{path.stem}", folder, Path.cwd(), path, sets, partition, time_limit, account,
                      list(sbatch_args))  # fmt: skip
    record = runs.Run("allocation" if nodes else "array", str(path), sets, str(Path.cwd()), output,
                      nodes=nodes, resumed=resume)  # fmt: skip
    if nodes is not None:
        if resume:
            job.overrides = [*sets, "executor.resume=true"]
        _allocation(slurm, job, record, nodes, ray_start_args, dry_run)
    else:
        assert slices is not None and tasks is not None
        _array(slurm, job, record, slices, tasks, cpus_per_task, dry_run)


def _allocation(slurm: Slurm, job: scripts.Job, record: runs.Run, nodes: int, ray_args: str, dry_run: bool) -> None:
    text = scripts.allocation(job, nodes, ray_start_args=ray_args)
    if dry_run:
        click.echo(text, nl=False)
        click.echo(f"# submit with: sbatch {job.run_dir / 'job.sh'}")
        return
    script = job.run_dir / "job.sh"
    script.write_text(text)
    record.jobs = [slurm.submit(str(script))]
    record.save(job.run_dir)
    click.echo(f"submitted job {record.jobs[0]}: {record.recipe} on {nodes} node(s), Ray across them")
    click.echo(f"follow it: mdf slurm status {_shown(job.run_dir)}")


def _array(
    slurm: Slurm, job: scripts.Job, record: runs.Run, slices: recipes.Slices, tasks: int, cpus: int | None,
    dry_run: bool,
) -> None:  # fmt: skip
    todo = slices.missing
    parts = runs.split(todo, tasks) if todo else []
    limit = slurm.max_array_size() if not dry_run else _max_array_size_or_default(slurm)
    pieces = runs.arrays(len(parts), limit)
    task_text, final_text = scripts.array_task(job, job.run_dir / "slices.txt", cpus), scripts.finalize(job)
    if dry_run:
        click.echo(task_text + "\n" + final_text, nl=False)
        click.echo("# slices.txt (shard numbers of each task):")
        click.echo("".join(f"#   {','.join(map(str, s))}\n" for s in parts), nl=False)
        for offset, count in pieces:
            click.echo(f"# sbatch --array=0-{count - 1} --export=ALL,MDF_SLURM_OFFSET={offset} task.sh")
        click.echo("# sbatch --dependency=afterany:<the arrays' job ids> finalize.sh")
        return
    runs.write_slices(job.run_dir, slices.shard_ids, parts)
    (job.run_dir / "task.sh").write_text(task_text)
    (job.run_dir / "finalize.sh").write_text(final_text)
    try:
        for offset, count in pieces:
            env = f"--export=ALL,MDF_SLURM_OFFSET={offset}"
            jid = slurm.submit(str(job.run_dir / "task.sh"), f"--array=0-{count - 1}", env)
            record.arrays.append(runs.Array(jid, offset, count))
            record.jobs.append(jid)
        after = f"--dependency=afterany:{':'.join(record.jobs)}" if record.jobs else ""
        record.finalize = slurm.submit(str(job.run_dir / "finalize.sh"), *([after] if after else []))
    except MdfError:
        if record.jobs:  # never half a run in the queue: what was submitted goes
            slurm.call("scancel", *record.jobs, check=False)
        raise
    record.save(job.run_dir)
    done = len(slices.shard_ids) - len(todo)
    what = f"{len(todo)} shard(s) in {len(parts)} task(s)" + (f" ({done} done before)" if done else "")
    ids = ", ".join(f"{a.job} (tasks 0-{a.count - 1})" for a in record.arrays) or "none needed"
    click.echo(f"submitted {record.recipe}: {what}; array job(s) {ids}; finalize job {record.finalize} after them")
    click.echo(f"follow it: mdf slurm status {_shown(job.run_dir)}")


def _max_array_size_or_default(slurm: Slurm) -> int:
    """For ``--dry-run`` on a machine that may have no Slurm: the cluster's limit if it answers, else Slurm's
    default."""
    try:
        return slurm.max_array_size()
    except SlurmError:
        from .slurm import DEFAULT_MAX_ARRAY_SIZE

        return DEFAULT_MAX_ARRAY_SIZE


def _shown(folder: Path) -> str:
    rel = os.path.relpath(folder)
    return rel if not rel.startswith("..") else str(folder)


@command.command("status")
@click.argument("run_dir", metavar="RUN", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="machine-readable")
@click.option("--lines", type=click.IntRange(min=0), default=15, show_default=True, help="log lines of a failed task")
def status(run_dir: Path, as_json: bool, lines: int) -> None:
    """Where the run RUN (the folder `mdf slurm run` printed) stands: shards done, running and failed, the
    failed tasks' log tails."""
    from .status import gather, render

    report = gather(run_dir, Slurm(), lines)
    click.echo(json.dumps(report, indent=1) if as_json else render(report))
