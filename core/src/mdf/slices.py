"""Slice runs: a recipe's shards split across processes that share one output (a Slurm job array, any scheduler).

``mdf run RECIPE --shards 3,4,9`` runs only those shards (numbers in the input's listing, :func:`slice_plan`),
inline, into an output that other slices write at the same time; ``mdf run RECIPE --finalize`` then checks that
every shard is done and publishes the output as one run. Why not the single-run claim (:mod:`mdf.output.local`):
its lock and manifest serialise writers, and many tasks must write at once. What makes concurrent slices safe:

* **Disjoint names.** Part files are named by input shard and committed by rename (:mod:`mdf.io.files`), so two
  slices never write the same file, and a killed slice leaves only ``.tmp`` files no dataset reader lists.
* **A completion record per shard**, ``_mdf/shards/<number>.json``, written (atomically, by rename) only after
  the shard's part files are committed and fsynced, with the shard's counts (:class:`mdf.tally.Counts`), the
  part files and the recipe's fingerprint. A task killed mid-shard leaves no record; the shard is simply missing.
* **A rerun replaces, never adds.** Before a shard runs, its record and the part files an earlier attempt
  committed are removed, so a rerun of a shard gives its rows once, whatever the earlier attempt left.
* **Finalize publishes once.** It refuses (one line naming the shards) while any shard has no record of this
  recipe's fingerprint, then claims the output through :func:`mdf.output.local.claim` as a resumed run and finishes
  it the way every run does (``metrics.json`` from the records' counts, ``run.json`` with the part files, the
  report), and writes ``_SUCCESS`` listing the part files: in a folder filled by many tasks over time, that is the
  one sign a reader can trust that the set is whole.

Recipes whose operators keep state across shards (deduplicators' key state) are refused: slices share no state,
so each would keep its own "first" copy. Outputs on ``s3://`` are refused too: an ``s3://`` output is written in a
local working folder and published by its one owner (:mod:`mdf.output.remote`), which concurrent tasks are not.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mdf import layout
from mdf.checks import rejected_folder_schema
from mdf.deduplicator import Deduplicator
from mdf.errors import RecipeError
from mdf.executor.inline import InlineParams
from mdf.executor.inline_pass import InlinePass
from mdf.executor.threads import auto_bytes_in_flight
from mdf.fingerprint import Fingerprint
from mdf.io.base import Shard
from mdf.io.rejected import FILE as REJECTED_SCHEMA
from mdf.metrics import RunMetrics
from mdf.output_paths import output_dirs
from mdf.plan import Plan
from mdf.planning import prepare
from mdf.plugin_set import Plugins
from mdf.recipe import Recipe
from mdf.storage.urls import is_remote
from mdf.tally import Counts

RECORDS = "shards"
"""``<output>/_mdf/shards/``: one completion record per shard, ``<number>.json``."""


@dataclass
class SlicePlan:
    """A recipe planned for slice runs: what :func:`slice_plan` returns."""

    plan: Plan
    fingerprint: Fingerprint
    stateful: list[str]
    """The operators that keep state across shards, ``"exact_dedup (stages[1].operators[0])"``: refused."""
    shard_ids: list[str]
    """Every shard of the input, in the listing's order: ``--shards`` numbers index this list."""
    output: str
    """The writer's folder, where the completion records live."""


def slice_plan(recipe: Recipe, resume: bool = False, plugins: Plugins | None = None) -> SlicePlan:
    """The recipe planned (every check before work, as ``mdf run``) for slice runs, and its output checked:
    without ``resume`` the output must be empty; with it, every record there must be of this recipe and input."""
    plan = prepare(recipe, plugins)
    for role, path in output_dirs(recipe):
        if is_remote(path):
            raise RecipeError(
                f"{role}.path: '{path}': slice runs (mdf run --shards, Slurm array mode) write a shared local or "
                "network folder; an s3:// output is published by one run only; run the recipe in one run instead"
            )
    stateful = []
    for i, stage in enumerate(recipe.stages):
        for j, spec in enumerate(stage.operators):
            if issubclass(plan.plugins.operators.get(spec.name), Deduplicator):
                stateful.append(f"{spec.name} (stages[{i}].operators[{j}])")
    fp = Fingerprint.of(plan)
    output = str(recipe.writer.params.get("path", "."))
    records = read_records(output)
    if not resume and any(_has_data(path) for _, path in output_dirs(recipe)):
        raise RecipeError(
            f"writer.path: '{output}' is not empty; pass --resume to continue the slice runs that wrote it, or "
            "write elsewhere"
        )
    other = next((r for r in records.values() if r.get("fingerprint") != fp.sha), None)
    if resume and other is not None:
        raise RecipeError(
            f"writer.path: cannot --resume '{output}': shard {other.get('index')} was written by another recipe or "
            "input; write elsewhere"
        )
    return SlicePlan(plan, fp, stateful, [s.id for s in plan.shards], output)


def shard_records(output: str | os.PathLike[str]) -> list[str]:
    """The ids of the shards of ``output`` that have a completion record (in shard order)."""
    return [r["shard"] for _, r in sorted(read_records(output).items())]


def run_slice(recipe: Recipe, numbers: list[int], plugins: Plugins | None = None) -> RunMetrics:
    """Run the shards numbered ``numbers`` inline into the shared output, each with its completion record."""
    sp = checked(recipe, plugins)
    plan = sp.plan
    bad = [n for n in numbers if not 0 <= n < len(plan.shards)]
    if bad or not numbers:
        raise RecipeError(
            f"--shards: {','.join(map(str, bad)) or 'nothing given'}: the input has shards 0-{len(plan.shards) - 1}; "
            "give comma-separated numbers in that range"
        )
    shards = [plan.shards[n] for n in dict.fromkeys(numbers)]
    for role, path in output_dirs(recipe):
        os.makedirs(layout.meta_dir(path) / RECORDS, exist_ok=True)
        if role == "rejected":
            write_atomic(layout.meta_dir(path) / REJECTED_SCHEMA, _schema_bytes(plan))
    writers = _writers(plan)
    for shard in shards:  # a rerun replaces: no record until done, no part of an earlier attempt left
        _record_path(sp.output, shard.index).unlink(missing_ok=True)
        for writer in writers:
            _remove_parts(writer, shard.id)
    spec = recipe.executor
    extra = {k: v for k, v in (spec.model_extra or {}).items() if k in InlineParams.model_fields}
    params = InlineParams.model_validate(extra if spec.type in (None, "inline") else {})
    sub = dataclasses.replace(plan, shards=shards, fingerprint=sp.fingerprint.sha)
    budget = params.max_bytes_in_flight or auto_bytes_in_flight()
    return _SlicePass(sp, sub, params.worker_count(len(shards)), budget).run(None)


class _SlicePass(InlinePass):
    """An inline pass that writes a shard's completion record once its parts are committed and durable."""

    def __init__(self, sp: SlicePlan, plan: Plan, workers: int, budget: int) -> None:
        super().__init__(plan, workers, budget, None, None)
        self.sp = sp
        self.started = time.time()

    def record(self, shard: Shard) -> None:
        if shard.id in self.recorded:
            return
        with self.lock:
            counts = Counts().merge(self.counter.tally.open.get(shard.id, Counts()))
        super().record(shard)
        paths = [p for r in self.runners for s in r.sinks if s.shard == shard.id and s.committed_ok()
                 for p in s.committed.result()]  # type: ignore[union-attr]  # fmt: skip
        for path in paths:  # the parts reach the disk before the record that says they are there
            fsync(path)
        for folder in {os.path.dirname(p) for p in paths}:
            fsync(folder)
        record = {"format": 1, "shard": shard.id, "index": shard.index, "fingerprint": self.sp.fingerprint.sha,
                  "host": socket.gethostname(), "pid": os.getpid(), "started": self.started, "finished": time.time(),
                  "parts": sorted(os.path.basename(p) for p in paths), "counts": counts.to_dict()}  # fmt: skip
        write_atomic(_record_path(self.sp.output, shard.index), json.dumps(record).encode())


def checked(recipe: Recipe, plugins: Plugins | None) -> SlicePlan:
    """The slice plan of a slice run or a finalize: records of another recipe refused, and state across shards."""
    sp = slice_plan(recipe, resume=True, plugins=plugins)
    if sp.stateful:
        raise RecipeError(
            f"{sp.stateful[0]} keeps state across shards, and slice runs share no state; run the recipe in one "
            "run (mdf run, or mdf slurm run --nodes N) instead"
        )
    return sp


def _writers(plan: Plan) -> list[Any]:
    from mdf.executor.base import Outputs

    outputs = Outputs.build(plan)
    return [w for w in (outputs.writer, outputs.rejected) if w is not None and hasattr(w, "part_path")]


def _remove_parts(writer: Any, shard_id: str) -> None:
    """The part files an earlier attempt committed for ``shard_id`` (``<id><suffix>``, ``<id>.<n><suffix>``), and
    the ``.tmp`` ones an attempt killed mid-shard left."""
    first = writer.part_path(shard_id)
    folder, name = os.path.split(first)
    suffix = name[len(shard_id) :]
    piece = re.compile(re.escape(shard_id) + r"(\.\d+)?" + re.escape(suffix) + r"(\.tmp)?$")
    for entry in os.listdir(folder):
        if piece.match(entry):
            os.unlink(os.path.join(folder, entry))


def _schema_bytes(plan: Plan) -> bytes:
    schema = rejected_folder_schema(plan)
    return b"" if schema is None else schema.serialize().to_pybytes()


def _record_path(output: str, index: int) -> Path:
    return layout.meta_dir(output) / RECORDS / f"{index:06d}.json"


def read_records(output: str | os.PathLike[str]) -> dict[int, dict[str, Any]]:
    folder = layout.meta_dir(output) / RECORDS
    out: dict[int, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = json.loads(path.read_text())
            out[int(record["index"])] = record
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a record being replaced, or not ours: the shard counts as missing
    return out


def _has_data(path: str) -> bool:
    folder = Path(path)
    return folder.is_dir() and any(p.name != layout.META for p in folder.iterdir())


def write_atomic(path: Path, blob: bytes) -> None:
    """Write ``blob`` under a name of this process, fsync, rename: concurrent tasks never share a temp file."""
    if not blob:
        return
    tmp = path.with_name(f".{path.name}.{socket.gethostname()}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(blob)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync(str(path.parent))


def fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
