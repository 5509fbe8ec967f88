"""The FineWeb quality chain (GopherRepetition -> GopherQuality -> C4(filter_no_terminal_punct=False) -> FineWeb)
on every real text of ``../shared/data``: DataTrove 0.10.1 against mdf's four filters, each side a whole process
pinned to one core (``bench_quality_filters.py``'s ``run_side``), interleaved; keep/drop agreement checked."""

from __future__ import annotations

import statistics
import subprocess
import sys

import pyarrow.parquet as pq
from bench_quality_filters import DATA, DT_PYTHON, HERE, compare, ensure_venv, run_side


def texts() -> str:
    """The real texts' Parquet (``quality/texts.py`` with -1: AEB bodies + resiliparse extractions), made once."""
    ensure_venv()
    src = DATA / "quality_texts_real.parquet"
    if not src.exists():
        subprocess.run([str(DT_PYTHON), str(HERE / "quality" / "texts.py"), str(src), "-1"], check=True)
    return str(src)


def run_chain(reps: int) -> dict:
    """{"datatrove"/"mdf": {"whole": [...], "filter": [...]}, "texts": n, "keep_agreement": %}."""
    src = texts()
    table = pq.read_table(src)
    res: dict = {"datatrove": {"whole": [], "filter": []}, "mdf": {"whole": [], "filter": []}, "texts": table.num_rows}
    for _ in range(reps):
        for name, python, script in (("datatrove", str(DT_PYTHON), "datatrove_side.py"),
                                     ("mdf", sys.executable, "mdf_side.py")):  # fmt: skip
            whole, info = run_side(python, script, "chain", src, DATA / f"q_peers_{name}.parquet")
            res[name]["whole"].append(whole)
            res[name]["filter"].append(info["filter_s"])
    cmp = compare("chain", table, pq.read_table(DATA / "q_peers_datatrove.parquet"),
                  pq.read_table(DATA / "q_peers_mdf.parquet"))  # fmt: skip
    res["keep_agreement"] = cmp["keep"]
    for name in ("datatrove", "mdf"):
        res[name]["whole_med"] = statistics.median(res[name]["whole"])
        res[name]["filter_med"] = statistics.median(res[name]["filter"])
    return res
