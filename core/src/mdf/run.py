"""A run's life above every executor: :func:`prepare` (the plan, every check before work; from
:mod:`mdf.planning`), which executor runs it, and :func:`run_recipe` (claim the output, run, write metrics,
report and lineage). Not in ``mdf.executor``, which holds executors: the life of a run uses them, they do not
use it.

:func:`prepare` does everything that can fail because of the recipe or the input listing (resolving names,
validating parameters, listing shards, reading Parquet footers) so a bad run fails with exit code 2 before a
single batch is read. The executor classes come from the plugin registry (core registers ``inline`` and
``ray``), so this module imports none of them. :func:`mdf.resolve.choose_executor` says which one a recipe gets
and why; ``mdf run`` prints that as one line.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable
from typing import Any

from mdf import __version__, layout
from mdf.checks import rejected_folder_schema
from mdf.errors import MdfError
from mdf.executor.api import Executor
from mdf.io.lineage import write_shard_map
from mdf.io.rejected import save as save_rejected_schema
from mdf.io.sharding import take_notes
from mdf.metrics import RunMetrics
from mdf.output.local import claim
from mdf.plan import Plan
from mdf.planning import prepare
from mdf.plugin_set import Plugins
from mdf.recipe import Recipe
from mdf.report.build import write_report
from mdf.report.context import run_context
from mdf.resolve import check_executor, choose_executor
from mdf.run_stats import ClusterInfo
from mdf.runlog import LOG, run_log
from mdf.terminate import as_terminated


def build_executor(plan: Plan) -> tuple[Executor, str]:
    """The recipe's executor, constructed with its validated parameters, and one line saying which and why."""
    spec = plan.recipe.executor
    name, why = choose_executor(spec, plan.plugins)
    params = check_executor(spec, plan.plugins)  # exit 2 (with the pip line) when the executor cannot run here
    cls = plan.plugins.executors.get(name, "executor.type")
    executor = cls(plan, params)
    detail = executor.summary()
    return executor, f"executor: {name}{' (' + detail + ')' if detail else ''}, because {why}"


def run_recipe(
    recipe: Recipe,
    progress: Any = None,
    plugins: Plugins | None = None,
    announce: Callable[[str], None] | None = None,
    overwrite: bool = False,
) -> RunMetrics:
    """Plan, claim the output folders (:mod:`mdf.output.local`: lock, fingerprint, ``--overwrite``/``--resume``),
    run with the executor the recipe gets, then publish (``_mdf/metrics.json``, swap of a staged output) and
    write the report."""
    owned = claim(prepare(recipe, plugins), overwrite)
    try:
        plan = owned.plan
        with run_log(layout.log_path(plan.output_dir)):
            LOG.info(
                "run started: mdf %s, recipe %s, output %s, fingerprint %s%s",
                __version__, recipe.source, ", ".join(d.remote.url for d in owned.dirs[:1] if d.remote) or owned.output,
                plan.fingerprint,
                ", resuming" if owned.resumed else "",
            )  # fmt: skip
            metrics = _run(plan, owned, recipe, progress, announce)
    except BaseException as exc:  # ^C and SIGTERM too: run.json says "failed" and why, never "running"
        error = disk_full(exc, owned.plan.output_dir) or as_terminated(exc) or exc
        try:
            owned.fail(error)
        finally:
            owned.release()
        if error is not exc:
            raise error from exc
        raise
    try:  # the data and metrics.json are published: a report that cannot be drawn must not fail the run
        metrics.report = write_report(owned.output)
        for d in owned.dirs[:1]:
            if d.remote is not None:  # an s3:// output: beside its metrics.json (under the lock still)
                d.remote.put_meta(metrics.report)
    except Exception as exc:  # said on the run's last line; `mdf report` retries it
        metrics.report_error = f"{type(exc).__name__}: {exc}"
    finally:
        owned.release()
    return metrics


def disk_full(exc: BaseException, output: str) -> MdfError | None:
    """A full disk as one line naming the file and the free space (exit 1; ``--resume`` continues once there is
    room), or ``None`` when ``exc`` is not one. On Ray the ``OSError`` arrives as a remote error's text."""
    seen: BaseException | None = exc
    while seen is not None:
        if (isinstance(seen, OSError) and seen.errno == errno.ENOSPC) or "No space left on device" in str(seen):
            break
        seen = seen.__cause__ or seen.__context__
    if seen is None:
        return None
    path = getattr(seen, "filename", None) or output
    probe = os.path.abspath(path)
    while not os.path.exists(probe) and probe != os.path.dirname(probe):
        probe = os.path.dirname(probe)
    try:
        usage = shutil.disk_usage(probe)
        free = f"{usage.free / 2**20:,.1f} MiB free of {usage.total / 2**20:,.1f} MiB"
    except OSError:
        free = "free space unknown"
    return MdfError(
        f"no space left on the device writing '{path}' ({free} on the file system of '{probe}'); free space or "
        "write to a larger disk, then run again with --resume"
    )


def _cluster(metrics: RunMetrics) -> ClusterInfo | None:
    """The cluster the executor says it ran on; a plugin's method that fails costs only that line."""
    try:
        return metrics.executor_metrics.cluster_info()
    except Exception:
        LOG.warning("%s.cluster_info() failed", type(metrics.executor_metrics).__name__, exc_info=True)
        return None


def _run(plan: Plan, owned: Any, recipe: Recipe, progress: Any, announce: Callable[[str], None] | None) -> RunMetrics:
    """Build the executor, run, publish; each step and a failure's full traceback go to the run log."""
    try:
        for note in take_notes():  # what the input listing skipped or merged (a symlink loop, a file named twice)
            LOG.warning("input: %s", note)
            if announce is not None:
                announce(f"input: {note}")
        write_shard_map([str(d.work) for d in owned.dirs], plan.shards)  # lineage: input -> part file name
        for d in owned.dirs:  # one schema for every rejected part file, so dataset readers read them whole
            if d.role == "rejected":
                save_rejected_schema(str(d.work), rejected_folder_schema(plan))
        executor, line = build_executor(plan)
        LOG.info("%s; %d shard(s), %s rows a batch", line, len(plan.shards), f"{plan.batch_rows:,}")
        if announce is not None:
            announce(line)
        metrics = executor.run(progress)
        metrics.context = run_context(recipe, plan.batch_plan, plan.batch_rows, _cluster(metrics))  # for the report
        for entry in metrics.damaged:
            LOG.warning("damaged input: %s", entry.describe())
        LOG.info(
            "run finished: %s read -> %s kept + %s rejected (%s) in %.2fs",
            f"{metrics.rows_read:,}", f"{metrics.rows_written:,}", f"{metrics.rows_rejected:,}",
            "balanced" if metrics.balanced else "NOT balanced", metrics.wall_s,
        )  # fmt: skip
        owned.finish(metrics)
    except BaseException as exc:
        LOG.error("run failed: %s: %s", type(exc).__name__, exc, exc_info=exc)
        raise
    return metrics
