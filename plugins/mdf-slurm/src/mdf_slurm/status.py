"""``mdf slurm status RUN``: the run's shards and jobs, from the output's completion records and Slurm.

What is true comes first from the output itself: a shard is *done* when its completion record is there
(written after its part files are committed), whatever Slurm says about the task that ran it. Slurm says the
rest: a task still in ``squeue`` is *pending* or *running*; one that left the queue without every shard of its
slice recorded *failed*, with the state ``sacct`` (where accounting is on) or ``scontrol show job`` (for
``MinJobAge`` after it ended) gives, and the tail of its log. In allocation mode the one job's state and the
output's run record say it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mdf import shard_records

from .runs import Run, read_slices
from .slurm import Slurm

_ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING"}


def _tail(path: Path, lines: int) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-lines:] if lines else []
    except OSError:
        return [f"(no log at {path})"]


def _state(slurm: Slurm, job: str, queued: dict[str, tuple[str, str]], acct: dict | None) -> tuple[str, str]:
    """``(state, detail)`` of a job or array task ``job`` (``123`` or ``123_4``)."""
    if job in queued:
        return queued[job]
    if acct is not None and job in acct:
        state, code = acct[job]
        return state, f"exit {code}"
    info = slurm.job(job)
    if info:
        return info.get("JobState", "UNKNOWN"), f"exit {info.get('ExitCode', '?')}"
    return "ENDED", "Slurm no longer holds it (past MinJobAge, no accounting)"


def gather(folder: Path, slurm: Slurm, lines: int = 15) -> dict[str, Any]:
    run = Run.load(folder)
    jobs = [*run.jobs, *([run.finalize] if run.finalize else [])]
    queued = slurm.queued(jobs)
    acct = slurm.finished(jobs)
    report: dict[str, Any] = {"run": str(folder), "mode": run.mode, "recipe": run.recipe, "output": run.output,
                              "submitted": run.submitted, "resumed": run.resumed}  # fmt: skip
    if run.mode == "allocation":
        job = run.jobs[0]
        state, detail = _state(slurm, job, queued, acct)
        report["job"] = {"id": job, "state": state, "detail": detail}
        report["output_status"] = _output_status(run.output)
        if state not in _ACTIVE and report["output_status"] != "complete":
            report["job"]["log"] = _tail(folder / f"slurm-{job}.out", lines)
        return report
    ids, slices = read_slices(folder)
    done = set(shard_records(run.output))
    tasks = []
    for array in run.arrays:
        for i in range(array.count):
            shard_nums = slices[array.offset + i]
            task = f"{array.job}_{i}"
            left = [n for n in shard_nums if ids[n] not in done]
            state, detail = ("COMPLETED", "every shard recorded") if not left else _state(slurm, task, queued, acct)
            entry = {"task": task, "shards": shard_nums, "missing": left, "state": state, "detail": detail}
            if left and state not in _ACTIVE:
                entry["state"] = "FAILED" if state in ("COMPLETED", "ENDED") else state
                entry["log"] = _tail(folder / "logs" / f"task-{array.job}_{i}.out", lines)
            tasks.append(entry)
    in_run = {n for s in slices for n in s}
    running = {n for t in tasks if t["state"] in _ACTIVE for n in t["missing"]}
    failed = {n for t in tasks if t["state"] not in _ACTIVE for n in t["missing"]}
    report["shards"] = {"total": len(ids), "done": sum(1 for s in ids if s in done),
                        "in_this_submission": len(in_run), "running_or_pending": len(running),
                        "failed": len(failed)}  # fmt: skip
    report["tasks"] = tasks
    if run.finalize:
        state, detail = _state(slurm, run.finalize, queued, acct)
        report["finalize"] = {"id": run.finalize, "state": state, "detail": detail}
        if state not in _ACTIVE and state != "COMPLETED":
            report["finalize"]["log"] = _tail(folder / "logs" / f"finalize-{run.finalize}.out", lines)
    report["output_status"] = _output_status(run.output)
    return report


def _output_status(output: str) -> str:
    """The output's run record status (``complete``, ``running``, ``failed``) where it is a local folder."""
    try:
        return str(json.loads((Path(output) / "_mdf" / "run.json").read_text()).get("status", "unknown"))
    except (OSError, ValueError):
        return "not written yet" if "://" not in output else "see the bucket"


def render(report: dict[str, Any]) -> str:
    out = [f"run {report['run']}: {report['mode']} mode, {report['recipe']} -> {report['output']}"
           f" (submitted {report['submitted']}{', resumed' if report['resumed'] else ''})"]  # fmt: skip
    if report["mode"] == "allocation":
        job = report["job"]
        out.append(f"job {job['id']}: {job['state']} ({job['detail']}); output {report['output_status']}")
        out += [f"  | {line}" for line in job.get("log", [])]
        return "\n".join(out)
    s = report["shards"]
    out.append(f"shards: {s['done']} of {s['total']} done, {s['running_or_pending']} running or pending, "
               f"{s['failed']} failed")  # fmt: skip
    for t in report["tasks"]:
        if t["state"] in _ACTIVE or t.get("log") is not None:
            nums = ",".join(map(str, t["shards"]))
            out.append(f"task {t['task']} (shards {nums}): {t['state']} ({t['detail']})")
            out += [f"  | {line}" for line in t.get("log", [])]
    fin = report.get("finalize")
    if fin:
        out.append(f"finalize job {fin['id']}: {fin['state']} ({fin['detail']}); output {report['output_status']}")
        out += [f"  | {line}" for line in fin.get("log", [])]
    if s["failed"]:
        out.append(f"resubmit the failed shards: mdf slurm run {report['recipe']} --array N --resume")
    return "\n".join(out)
