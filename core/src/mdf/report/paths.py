"""Where a run's metadata lives: ``<output>/_mdf/`` (metrics.json, manifest, state, report), or, for runs
written before that layout, ``<output>/`` itself. One function so the report follows wherever metadata goes."""

from __future__ import annotations

from pathlib import Path

META = "_mdf"
METRICS = "metrics.json"
REPORT = "report.html"


def meta_dir(output: str | Path) -> Path:
    """The metadata folder of the run that wrote ``output``: ``<output>/_mdf/`` when it holds metrics.json,
    else ``<output>/`` when that does, else ``<output>/_mdf/`` (where a new run will write it)."""
    out = Path(output)
    for candidate in (out / META, out):
        if (candidate / METRICS).is_file():
            return candidate
    return out / META


def report_path(output: str | Path) -> Path:
    """``<output>/_mdf/report.html``: always under ``_mdf/`` so dataset readers skip it."""
    return Path(output) / META / REPORT
