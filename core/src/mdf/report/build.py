"""Build ``<output>/_mdf/report.html`` from a run's metadata (what ``mdf run`` and ``mdf report`` call).

The sections are imported when a page is rendered, not when this module is: every run imports this module
before its first batch, and only its end needs them.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from mdf import crash
from mdf.errors import MdfError
from mdf.layout import metrics_path, report_path, run_record_path
from mdf.metrics import RunMetrics

SECTIONS = (
    ("summary", "Summary"),
    ("funnel", "Funnel"),
    ("throughput", "Throughput"),
    ("latency", "Latency"),
    ("bottleneck", "Bottleneck"),
    ("key-state", "Key state"),
    ("shards", "Shards"),
    ("recipe", "Recipe"),
    ("batch-size", "Batch size"),
    ("projection", "Scale-out"),
)


class MetricsFileError(MdfError):
    """``metrics.json`` is not what a run wrote (changed or damaged since), or its run did not finish: one line
    naming the file and what is wrong, exit 2 (nothing was drawn)."""

    exit_code = 2


def load_metrics(output: str | os.PathLike[str]) -> RunMetrics:
    path = metrics_path(Path(output))
    if not path.is_file():
        dead = crash.dead_run(output) or crash.crashed(output)
        if dead is not None:
            raise MetricsFileError(f"{output}: {crash.describe(output, dead)}; `mdf run --resume` continues it")
        raise MdfError(f"{output}: no _mdf/metrics.json (not the output folder of an mdf run); pass the writer's path")
    try:
        data = json.loads(path.read_bytes())
    except RecursionError:
        raise MetricsFileError(f"{path}: {_NOT} it is nested too deep to be one mdf wrote; {_FIX}") from None
    except ValueError as exc:
        raise MetricsFileError(f"{path}: {_NOT} it is not JSON ({exc}); {_FIX}") from None
    if not isinstance(data, dict):
        kind = {type(None): "null", list: "a list", str: "a string", bool: "a boolean"}.get(type(data), "a number")
        raise MetricsFileError(f"{path}: {_NOT} it holds {kind}, not the JSON object mdf writes; {_FIX}")
    try:
        return RunMetrics.from_dict(data)
    except MdfError:
        raise  # another version: said by the record itself
    except Exception as exc:  # a value of another type or shape than mdf writes
        raise MetricsFileError(_unreadable(path, exc)) from None


_NOT = "not a metrics.json mdf can read:"
_FIX = "it was changed or damaged after the run: run the recipe again (--overwrite), or restore the file"


def _unreadable(path: Path, exc: BaseException) -> str:
    return f"{path}: {_NOT} a value mdf cannot read ({type(exc).__name__}: {str(exc)[:200]}); {_FIX}"


def _as_written(output: Path) -> bool:
    """Whether ``metrics.json`` is the file its run wrote (the digest ``run.json`` holds)."""
    try:
        record = json.loads(run_record_path(output).read_text())
        want = record.get("metrics_sha256") if isinstance(record, dict) else None
        return want is not None and hashlib.sha256(metrics_path(output).read_bytes()).hexdigest() == want
    except (OSError, ValueError):
        return False


def render(m: RunMetrics) -> str:
    """The page for a run's metrics (with sample rejected rows when the rejected output is still there)."""
    from mdf.report import scale, sections
    from mdf.report.html import page
    from mdf.report.samples import rejected_samples

    reasons = [r for r, _ in sections._reasons_in_order(m)]
    samples = rejected_samples(m.context.rejected_path, m.context.rejected_format, reasons)
    body = {
        "summary": sections.summary(m),
        "funnel": sections.funnel(m, samples),
        "throughput": sections.throughput(m),
        "latency": sections.latency(m),
        "bottleneck": scale.bottleneck(m),
        "key-state": scale.key_state(m),
        "shards": sections.shards(m),
        "recipe": sections.recipe(m),
        "batch-size": sections.batch_size(m),
        "projection": scale.projection(m),
    }
    parts = [(i, t, body[i]) for i, t in SECTIONS]
    after = [i for i, _ in SECTIONS].index("bottleneck") + 1
    for sid, stitle, html in scale.executor_sections(m):  # the executor's own: replace a core section or follow it
        at = next((k for k, (i, _, _) in enumerate(parts) if i == sid), None)
        if at is not None:
            parts[at] = (sid, parts[at][1], html)
        else:
            parts.insert(after, (sid, stitle, html))
            after += 1
    title = f"mdf run report: {m.rows_read:,} rows -> {m.rows_written:,} kept"
    subtitle = f"{m.executor} executor, {m.wall_s:,.2f} s, {m.rows_per_s:,.0f} rec/s"
    return page(title, subtitle, parts)


def write_report(output: str | os.PathLike[str]) -> Path:
    """Render the report of the run that wrote ``output`` and write it atomically beside its metadata.

    A value that passed :func:`load_metrics` and still cannot be drawn (a count that is a string, a stage that is
    a number) is the file's fault when the file is not the one the run wrote (its SHA-256 is in ``run.json``,
    ``metrics_sha256``; an older run's record has none): one line naming it, exit 2. With the run's own file it is
    mdf's bug, and stays an unexpected error."""
    m = load_metrics(output)
    try:
        html = render(m)
    except Exception as exc:
        if _as_written(Path(output)):
            raise
        raise MetricsFileError(_unreadable(metrics_path(Path(output)), exc)) from exc
    out = report_path(Path(output))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".html.tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, out)
    return out
