"""The cached CommonCrawl-like input of the Ray benchmarks (``mdf.demo_data``), generated once, file by file."""

from __future__ import annotations

import glob
import json
import os
import shutil
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DATA = Path(__file__).resolve().parent.parent / ".data"


def cc_dataset(rows: int, files: int) -> Path:
    """``files`` zstd Parquet files of ``rows`` records in all under ``benchmarks/.data/ray-cc-ROWSxFILES``.

    Each file is its own ``make_table`` (seed 7 + file number) so memory stays at one file's worth; ids are
    renumbered to be unique across files. Generation is not timed by any benchmark. Pages are read once so the
    first system timed does not pay for the disk.
    """
    from mdf.demo_data import DemoSpec, make_table

    out = DATA / f"ray-cc-{rows}x{files}"
    marker = out / "COMPLETE"
    if not marker.exists():
        print(f"generating {rows:,} rows in {files} files under {out} ...", flush=True)
        t0 = time.perf_counter()
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        per = -(-rows // files)
        for k in range(files):
            n = min(per, rows - k * per)
            table = make_table(DemoSpec(rows=n, files=1, seed=7 + k))
            ids = pa.array([f"doc-{k * per + i:09d}" for i in range(n)])
            table = table.set_column(table.schema.get_field_index("id"), "id", ids)
            pq.write_table(table, out / f"cc-{k:05d}.parquet", row_group_size=10_000, compression="zstd")
        marker.write_text(json.dumps({"rows": rows, "files": files}))
        print(f"  generated in {time.perf_counter() - t0:.1f} s", flush=True)
    for p in sorted(glob.glob(str(out / "*.parquet"))):
        Path(p).read_bytes()
    return out


def count_rows(folder: Path) -> int:
    """Rows in the Parquet files under ``folder`` (Ray's own temp folder, if any, skipped)."""
    paths = glob.glob(str(folder / "**" / "*.parquet"), recursive=True)
    return sum(pq.read_metadata(p).num_rows for p in paths if f"{os.sep}_ray{os.sep}" not in p)
