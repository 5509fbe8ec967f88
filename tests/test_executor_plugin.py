"""A third executor, installed as users install plugins (an entry point of group ``mdf``), runs a recipe and its
own figures reach ``mdf run``'s table and ``report.html`` with no change to core: core asks the executor's
metrics record for its lines and sections (:class:`mdf.ExecutorMetrics`) and names no executor.

Fails on the old core (``isinstance(..., RayMetrics)`` in the table and the report; ``metrics.json`` read back
with a fixed ``{"inline", "ray"}`` map): seen, the serial line is missing from the table and the section from the
page. The broken-renderer test fails when ``render`` does not guard the executor's sections: seen (the report is
not written and the run's last line says so)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from mdf.testing import read_output

PLUGIN_SRC = Path(__file__).parent / "serial_executor"


def install(site: Path) -> dict[str, str]:
    """The plugin's dist-info (entry point ``mdf``) in ``site``; the env that puts it and the package on the path."""
    dist = site / "mdf_serial-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mdf-serial\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[mdf]\nserial = mdf_serial.plugin\n")
    return {"PYTHONPATH": os.pathsep.join([str(site), str(PLUGIN_SRC), os.environ.get("PYTHONPATH", "")])}


def mdf(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mdf.cli"]
    full = {**os.environ, "COLUMNS": "250", **env}
    return subprocess.run([*cmd, *args], env=full, capture_output=True, text=True, timeout=300)


def _recipe(tmp_path: Path, **executor: object) -> Path:
    texts = ["keep this row", "", "another kept row", "x"] * 25
    (tmp_path / "in").mkdir()
    for i in range(2):
        pq.write_table(pa.table({"id": range(len(texts)), "text": texts}), tmp_path / "in" / f"part-{i}.parquet")
    recipe = {
        "reader": {"type": "parquet", "paths": [str(tmp_path / "in")]},
        "stages": [{"name": "clean", "operators": [{"score_filter": {"column": "id", "min": 10}}]}],
        "writer": {"type": "parquet", "path": str(tmp_path / "out")},
        "rejected": {"type": "parquet", "path": str(tmp_path / "rejected")},
        "executor": {"type": "serial", "batch_rows": 30, **executor},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


def test_a_plugin_executor_shows_its_figures_in_the_table_and_the_report(tmp_path) -> None:
    env = install(tmp_path / "site")
    res = mdf("run", str(_recipe(tmp_path)), env=env)
    assert res.returncode == 0, res.stderr
    assert "mdf run (serial)" in res.stdout
    assert "serial: 2 shard(s) one after another; slowest" in res.stdout  # the executor's own line
    assert "balanced" in res.stdout
    kept, rejected = read_output(tmp_path / "out"), read_output(tmp_path / "rejected")
    assert kept.num_rows == 2 * 90 and rejected.num_rows == 2 * 10
    page = (tmp_path / "out" / "_mdf" / "report.html").read_text()
    assert '<section id="serial"><h2>Serial executor: time per shard</h2>' in page
    assert 'href="#serial"' in page and "part-1" in page
    assert '<section id="bottleneck">' in page  # core's own sections stay


@pytest.mark.parametrize("cli", ["run", "report"])
def test_a_broken_executor_renderer_costs_its_section_not_the_run(tmp_path, cli) -> None:
    env = install(tmp_path / "site")
    res = mdf("run", str(_recipe(tmp_path, broken=True)), env=env)
    assert res.returncode == 0, res.stderr
    if cli == "report":  # `mdf report` reads the record back from metrics.json, with the plugin's class
        res = mdf("report", str(tmp_path / "out"), env=env)
        assert res.returncode == 0, res.stderr
    assert "report: not written" not in res.stdout
    page = (tmp_path / "out" / "_mdf" / "report.html").read_text()
    assert "the serial executor's report section failed: RuntimeError: the serial renderer is broken" in page
    assert '<section id="funnel">' in page and '<section id="projection">' in page
