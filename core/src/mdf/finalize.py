"""``mdf run RECIPE --finalize``: the output of slice runs (:mod:`mdf.slices`) published as one run.

It refuses, in one line naming them, while any shard has no completion record of this recipe's fingerprint, and
publishes nothing then. Otherwise it claims the output through :func:`mdf.output.local.claim` as a resumed run (a
run record of the slices' fingerprint is written first where none is, so the claim knows the folder's files as
this recipe's) and finishes it the way every run does: ``metrics.json`` from the records' counts, ``run.json``
listing the part files, the report. Then ``_SUCCESS`` lists the part files: in a folder that many tasks filled
over time, it is the one sign a reader can trust that the set is whole.

Apart from :mod:`mdf.slices`, which mdf's public face exports, because publishing needs the report modules.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from mdf import layout
from mdf.errors import MdfError
from mdf.executor.batches import PassCounter
from mdf.executor.inline_metrics import InlineMetrics
from mdf.io.lineage import write_shard_map
from mdf.metrics import RunMetrics
from mdf.output.local import _write_record, claim
from mdf.output_paths import output_dirs
from mdf.plugin_set import Plugins
from mdf.recipe import Recipe
from mdf.report.build import write_report
from mdf.report.context import run_context
from mdf.slices import checked, read_records, write_atomic
from mdf.tally import Counts


class MissingShards(MdfError):
    """``--finalize`` found shards without a completion record: run them first (exit 1, nothing published)."""


def finalize(recipe: Recipe, plugins: Plugins | None = None) -> Any:
    """Check that every shard has a completion record of this recipe, then publish the output as one run:
    the owned run (:class:`mdf.output.local.OwnedRun`, released) and its metrics."""
    sp = checked(recipe, plugins)
    records = {r["shard"]: r for r in read_records(sp.output).values() if r.get("fingerprint") == sp.fingerprint.sha}
    missing = [i for i, s in enumerate(sp.shard_ids) if s not in records]
    if missing:
        nums = ",".join(map(str, missing))
        raise MissingShards(
            f"{len(missing)} of {len(sp.shard_ids)} shard(s) have no completion record ({_span(missing)}); run them "
            f"first (mdf run {recipe.source} --shards {nums}, or mdf slurm run ... --resume), then --finalize again"
        )
    total = Counts()
    for shard_id in sp.shard_ids:
        total.merge(Counts.from_dict(records[shard_id]["counts"]))
    done = list(records.values())
    metrics = RunMetrics(executor="inline", shards=len(sp.shard_ids), executor_metrics=InlineMetrics())
    total.add_to(metrics)  # rows, reasons, damaged files; the operators go in by position below
    counter = PassCounter(metrics, recipe.stages)
    counter.operators[: len(total.operators)] = total.operators
    metrics = counter.finish(round(max(r["finished"] for r in done) - min(r["started"] for r in done), 3))
    for _, path in output_dirs(recipe):  # a run record for claim() to resume: the slices' fingerprint
        if not layout.run_record_path(path).exists():
            _write_record(Path(path), sp.fingerprint, "slices", False)
    resumed = recipe.model_copy(update={"executor": recipe.executor.model_copy(update={"resume": True})})
    owned = claim(dataclasses.replace(sp.plan, recipe=resumed))
    try:
        write_shard_map([str(d.work) for d in owned.dirs], sp.plan.shards)
        metrics.context = run_context(recipe, sp.plan.batch_plan, sp.plan.batch_rows, None)
        owned.finish(metrics)
        parts = {name for r in done for name in r["parts"]}  # not a .tmp a killed attempt left
        for d in owned.dirs:
            names = sorted(p.name for p in Path(d.published).iterdir() if p.name in parts)
            files = [{"name": n, "size": (Path(d.published) / n).stat().st_size} for n in names]
            blob = {"fingerprint": sp.fingerprint.sha, "shards": len(sp.shard_ids), "files": files}
            write_atomic(Path(d.published) / "_SUCCESS", json.dumps(blob, indent=1).encode())
        try:
            metrics.report = write_report(owned.output)
        except Exception as exc:  # the data and metrics are published; `mdf report` retries the report
            metrics.report_error = f"{type(exc).__name__}: {exc}"
    finally:
        owned.release()
    return metrics


def _span(numbers: list[int]) -> str:
    shown = ",".join(map(str, numbers[:20]))
    return f"shards {shown}{f' and {len(numbers) - 20} more' if len(numbers) > 20 else ''}"
