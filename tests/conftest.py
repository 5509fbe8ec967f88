from __future__ import annotations

import os

# Ray started by these tests binds to 127.0.0.1 only; must be set before ray is imported anywhere.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def mdf_command() -> list[str]:
    """The installed ``mdf`` command beside this interpreter, or the module where no script was installed."""
    exe = Path(sys.executable).with_name("mdf")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mdf.cli"]


def run_mdf(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, replace_env: bool = False
) -> subprocess.CompletedProcess:
    """Run the installed ``mdf`` command (the way users do) and capture its output; ``env`` is added to this
    process's environment, or with ``replace_env`` is the whole of it (a test that must hide a variable)."""
    full_env = {**({} if replace_env else os.environ), "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [*mdf_command(), *args], cwd=cwd or ROOT, env=full_env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def mdf():
    return run_mdf


def modules_after_mdf(listing: Path, *args: str) -> set[str]:
    """``mdf ARGS`` run through mdf's own entry point in a fresh interpreter; every module the process held once
    the command returned (``sys.modules``, written to ``listing``). Module lists, not times, are what the start-up
    tests assert: a time depends on the machine's load, a module list does not."""
    code = (
        "import sys\nfrom mdf.cli import main\ntry:\n    main()\nfinally:\n"
        f"    open({str(listing)!r}, 'w').write('\\n'.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    names = set(listing.read_text().split())
    assert "pyarrow.parquet" in names  # the listing itself works
    return names
