"""Where a run keeps what is not data: everything under ``<output>/_mdf/``.

Dataset readers (pyarrow's dataset discovery, Polars, DuckDB, Spark) skip names that start with ``_`` or ``.``,
so an output folder holding part files plus ``_mdf/`` reads as a dataset as it is. Every module that writes run
metadata asks this one for the path, so the layout is defined once.
"""

from __future__ import annotations

from pathlib import Path

META = "_mdf"
STAGING_SUFFIX = ".mdf-staging"


def meta_dir(output: str | Path) -> Path:
    """``<output>/_mdf``: run record, lock, manifest, key-state snapshots, metrics, report, log."""
    return Path(output) / META


def lock_path(output: str | Path) -> Path:
    return meta_dir(output) / "lock"


def run_record_path(output: str | Path) -> Path:
    """The run's fingerprint and status (``run.json``), written before any data."""
    return meta_dir(output) / "run.json"


def state_dir(output: str | Path) -> Path:
    """Checkpoint manifest (completed shards, restored counts) and key-state snapshots."""
    return meta_dir(output) / "state"


def metrics_path(output: str | Path) -> Path:
    return meta_dir(output) / "metrics.json"


def report_path(output: str | Path) -> Path:
    return meta_dir(output) / "report.html"


def log_path(output: str | Path) -> Path:
    """The run's log file: what does not belong on the terminal (remote tracebacks, library warnings)."""
    return meta_dir(output) / "run.log"


def staging_dir(output: str | Path) -> Path:
    """Sibling folder an ``--overwrite`` run writes into before it swaps with ``output`` (hidden: ``.`` prefix)."""
    p = Path(output).absolute()
    return p.parent / f".{p.name}{STAGING_SUFFIX}"


def is_data_name(name: str) -> bool:
    """True for names dataset readers list as data (not ``_``- or ``.``-prefixed)."""
    return not name.startswith(("_", "."))
