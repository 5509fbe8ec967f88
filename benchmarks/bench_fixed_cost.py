"""A run's fixed cost: ``mdf run`` of a 10-row Parquet recipe (one filter, rejected output, report) as a whole
process, against ``python -c "import pyarrow.parquet, pyarrow.compute"`` in the same loop.

What a user pays before any record: start-up (imports, plugins, recipe), planning, the output's claim and
publication, and the report. The per-record benchmarks (W1, W2, W3) print :func:`fixed_cost_line` beside their
rates so the two are never confused.

Printed: the median and best wall of each, their ratio (target <= 2.0x), and, from inside the mdf process (a
wrapper script of this benchmark, not mdf code), the time from exec to the first batch read against a bare
``import pyarrow.parquet`` (target <= 0.35 s over it) and the time the report took to write (target <= 0.2 s).

    python benchmarks/bench_fixed_cost.py [--repeat 9]

Note: Python writes no ``.pyc`` when ``PYTHONDONTWRITEBYTECODE`` is set (it is on some CI images): every import
then compiles from source and the fixed cost triples. This script warns when it is set; run
``python -m compileall -q <site-packages> core/src plugins`` once or unset it for figures a user would see.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PEER = [sys.executable, "-c", "import pyarrow.parquet, pyarrow.compute"]
BARE_PARQUET = [sys.executable, "-c", "import time, sys; import pyarrow.parquet; print(time.time())"]

# Runs mdf's CLI in this process after wrapping two functions to time them: the first batch a reader yields
# (ParquetReader.read) and the report (write_report as the run calls it). Prints one JSON line on stderr.
PROBE = r"""
import json, os, sys, time
T0 = float(os.environ["BENCH_T0"])
marks = {}
import mdf.io.parquet as mp
_read = mp.ParquetReader.read
def read(self, *a, **k):
    for i, b in enumerate(_read(self, *a, **k)):
        marks.setdefault("first_batch_s", time.time() - T0)
        yield b
mp.ParquetReader.read = read
import mdf.run as sel
_write = sel.write_report
def write_report(out):
    t = time.perf_counter()
    try:
        return _write(out)
    finally:
        marks["report_s"] = time.perf_counter() - t
sel.write_report = write_report
from mdf.cli import main
try:
    main()
finally:
    sys.stderr.write("BENCH " + json.dumps(marks) + "\n")
"""


def make_recipe(root: Path) -> Path:
    """10 rows of Parquet and a recipe with one filter, a rejected output and the report (always written)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / "data").mkdir(parents=True, exist_ok=True)
    rows = 10
    table = pa.table(
        {
            "id": [f"doc-{i}" for i in range(rows)],
            "url": [f"https://site{i}.example/page" for i in range(rows)],
            "text": ["some words of text " * (1 + 3 * i) for i in range(rows)],
        }
    )
    pq.write_table(table, root / "data" / "ten.parquet")
    recipe = root / "recipe.yaml"
    recipe.write_text(
        f"reader: {{type: parquet, paths: ['{root / 'data' / 'ten.parquet'}']}}\n"
        "stages:\n  - name: clean\n    operators:\n      - text_length_filter: {min_length: 100}\n"
        f"writer: {{type: parquet, path: '{root / 'out'}'}}\n"
        f"rejected: {{type: parquet, path: '{root / 'rejected'}'}}\n"
        "executor: {type: inline}\n"
    )
    return recipe


def mdf_command(recipe: Path) -> list[str]:
    script = Path(sys.executable).parent / "mdf"
    head = [str(script)] if script.exists() else [sys.executable, "-c", "from mdf.cli import main; main()"]
    return [*head, "run", "-q", "--overwrite", str(recipe)]


CPU: list[float] = [0.0]  # user + sys seconds of the last command: steadier than wall on a loaded machine


def _wall(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[0] = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr[-2000:]}")
    return wall, out.stdout + out.stderr


def measure(repeat: int = 7, probe: bool = True) -> dict[str, list[float]]:
    """Interleaved repetitions: mdf, the peer, a bare pyarrow.parquet import, the probed mdf run."""
    res: dict[str, list[float]] = {"mdf": [], "peer": [], "mdf_cpu": [], "peer_cpu": [],
                                   "first_batch_over_parquet": [], "report": []}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="mdf-fixed-") as tmp:
        recipe = make_recipe(Path(tmp))
        _wall(mdf_command(recipe))  # warm the page cache and .pyc files
        for _ in range(repeat):
            res["mdf"].append(_wall(mdf_command(recipe))[0])
            res["mdf_cpu"].append(CPU[0])
            res["peer"].append(_wall(PEER)[0])
            res["peer_cpu"].append(CPU[0])
            if not probe:
                continue
            t0 = time.time()
            bare = float(_wall(BARE_PARQUET)[1].split()[0]) - t0
            env = {**os.environ, "BENCH_T0": repr(time.time())}
            _, text = _wall([sys.executable, "-c", PROBE, *mdf_command(recipe)[-4:]], env)
            marks = json.loads(text.rsplit("BENCH ", 1)[1].splitlines()[0])
            res["first_batch_over_parquet"].append(marks["first_batch_s"] - bare)
            res["report"].append(marks["report_s"])
    return res


def fixed_cost_line(repeat: int = 3) -> str:
    """One line for the per-record benchmarks: the 10-row run's wall beside the bare pyarrow import."""
    res = measure(repeat, probe=False)
    m, p = min(res["mdf"]), min(res["peer"])
    return (
        f"fixed cost (10-row recipe with report, whole process, best of {repeat}): mdf {m:.2f} s, "
        f"python -c 'import pyarrow.parquet, pyarrow.compute' {p:.2f} s ({m / p:.2f}x)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("warning: PYTHONDONTWRITEBYTECODE is set: imports compile from source unless .pyc files exist")
    res = measure(args.repeat)
    print(f"fixed cost of a 10-row run, {args.repeat} interleaved reps, {os.cpu_count()} CPUs")
    for key, label in (("mdf", "mdf run -q (10 rows, report)"), ("peer", "python -c 'import pyarrow.parquet, "
                       "pyarrow.compute'"), ("mdf_cpu", "  mdf CPU time (user + sys)"), ("peer_cpu", "  peer CPU "
                       "time (user + sys)"), ("first_batch_over_parquet", "exec -> first batch, over bare "
                       "import pyarrow.parquet"), ("report", "report written in")):  # fmt: skip
        vals = res[key]
        print(f"  {label:<58} median {statistics.median(vals):6.3f} s  best {min(vals):6.3f} s")
    ratio_med = statistics.median(res["mdf"]) / statistics.median(res["peer"])
    ratio_best = min(res["mdf"]) / min(res["peer"])
    print(f"mdf / peer: {ratio_med:.2f}x (medians), {ratio_best:.2f}x (best); target <= 2.0x")
    cpu = statistics.median(res["mdf_cpu"]) / statistics.median(res["peer_cpu"])
    print(f"mdf / peer CPU time: {cpu:.2f}x (medians; wall on a loaded machine counts waiting for a core)")
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
