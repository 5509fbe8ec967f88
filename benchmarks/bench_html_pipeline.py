"""HTML extraction as a whole process on one core: ``mdf run`` (Parquet -> ``html_extract`` -> Parquet) vs the
resiliparse script a user would write for the same job.

Why a second HTML benchmark: ``bench_html_extract.py`` times the extractors alone on decoded text. A user
compares whole jobs: start the interpreter, read the pages, decode them, extract, write the result. Start-up and
I/O are then part of the figure, and on small inputs they decide it (issue 24's fixed-cost rows).

Data: the real pages of ``../shared/data`` read in place (the 181 AEB pages and Readability's 130 test pages,
raw bytes, not decoded here), cycled to ``--pages`` rows (default 990, the held-out corpus' size) and written
once to a temp Parquet file: ``url``, ``body`` (binary, as the warc reader gives it).

* **mdf** - ``taskset -c 0 mdf run -q``: parquet reader -> ``html_extract`` (column ``body``; the kernel decodes
  the bytes itself; ``blocks: model``, the default) -> parquet writer (zstd, ``body`` dropped),
  ``executor.workers=1``, ``MDF_NUM_THREADS=1``. **mdf rules**: the same with ``blocks: rules``.
* **resiliparse** - ``taskset -c 0 python script``: ``pyarrow.parquet.read_table``, per page
  ``HTMLTree.parse_from_bytes(body, detect_encoding(body))``, ``extract_plain_text(tree, main_content=True)`` and
  ``tree.title``, then ``pyarrow.parquet.write_table`` (zstd) of url, text, title. resiliparse runs in
  ``benchmarks/.venv-html`` (made with uv on first use, as ``bench_html_extract.py`` does; pyarrow added to it).

Each process is timed wall-clock from launch to exit, round-robin, best of ``--repeat``; both write the same
number of rows (asserted). Printed: seconds, pages/s and the ratio resiliparse wall / mdf wall (>1: mdf faster).
Target (issue 24, 26): >= 1.5x on 990 pages.

    python benchmarks/bench_html_pipeline.py [--pages 990] [--times 1,5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"
sys.path.insert(0, str(HERE))

from bench_fixed_cost import fixed_cost_line  # noqa: E402
from bench_html_extract import peer_python  # noqa: E402  (the peers' venv, made once)
from bench_kernels_common import timed_process  # noqa: E402

SCRIPT = """
import sys
import pyarrow as pa, pyarrow.parquet as pq
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.encoding import detect_encoding
from resiliparse.parse.html import HTMLTree

table = pq.read_table(sys.argv[1], columns=["url", "body"])
texts, titles = [], []
for body in table.column("body").to_pylist():
    tree = HTMLTree.parse_from_bytes(body, detect_encoding(body))
    texts.append(extract_plain_text(tree, main_content=True))
    titles.append(tree.title)
out = pa.table({"url": table.column("url"), "text": texts, "title": titles})
pq.write_table(out, sys.argv[2], compression="zstd")
"""


def real_pages() -> list[bytes]:
    """The raw bytes of every real page here: AEB's gzipped pages, then Readability's test pages' sources."""
    aeb = sorted((DATA / "aeb" / "html").glob("*.html.gz"))
    readability = sorted((DATA / "readability-pages").glob("*/source.html"))
    if not aeb and not readability:
        raise SystemExit(f"no pages under {DATA}: see its README")
    return [gzip.decompress(p.read_bytes()) for p in aeb] + [p.read_bytes() for p in readability]


def write_input(folder: Path, pages: list[bytes], n: int) -> Path:
    path = folder / "pages.parquet"
    rows = [pages[i % len(pages)] for i in range(n)]
    table = pa.table({"url": [f"https://example.org/{i}" for i in range(n)], "body": pa.array(rows, pa.binary())})
    pq.write_table(table, path, row_group_size=64)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=990, help="rows of one input (real pages cycled)")
    ap.add_argument("--times", default="1,5", help="input sizes to run, as multiples of --pages")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    peer = str(peer_python())
    if subprocess.run([peer, "-c", "import pyarrow"], capture_output=True).returncode != 0:
        subprocess.run(["uv", "pip", "install", "-q", "--python", peer, "pyarrow"], check=True)  # the script's I/O
    pages = real_pages()
    work = Path(tempfile.mkdtemp(prefix="mdf-bench-html-"))
    script = work / "resiliparse_job.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "MDF_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": ""}
    env.pop("PYTHONDONTWRITEBYTECODE")
    mdf = str(Path(sys.executable).parent / "mdf")
    print(f"{len(pages)} real pages, cycled; one core (taskset -c 0), best of {args.repeat}, load {os.getloadavg()}")
    for times in (int(t) for t in args.times.split(",")):
        n = args.pages * times
        folder = work / f"n{n}"
        folder.mkdir()
        data = write_input(folder, pages, n)
        cmds = {}
        for blocks in ("model", "rules"):
            recipe = {
                "reader": {"type": "parquet", "paths": [str(data)]},
                "stages": [{"name": "extract", "operators": [{"html_extract": {"column": "body", "blocks": blocks}}]}],
                "writer": {"type": "parquet", "path": str(folder / f"mdf-{blocks}"), "drop_columns": ["body"]},
                "executor": {"type": "inline", "workers": 1},
            }
            (folder / f"{blocks}.yaml").write_text(yaml.safe_dump(recipe))
            name = "mdf" if blocks == "model" else "mdf rules"
            cmds[name] = ["taskset", "-c", "0", mdf, "run", "-q", "--overwrite", str(folder / f"{blocks}.yaml")]
        cmds["resiliparse"] = ["taskset", "-c", "0", peer, str(script), str(data), str(folder / "res.parquet")]
        best = {name: float("inf") for name in cmds}
        for _ in range(args.repeat):
            for name, cmd in cmds.items():
                best[name] = min(best[name], timed_process(cmd, env))
        for out in ("mdf-model", "mdf-rules", "res.parquet"):
            assert pq.read_table(folder / out).num_rows == n, f"{out} has not {n} rows"
        for name, wall in best.items():
            print(f"  {n:6,} pages  {name:12s} {wall:7.2f} s  {n / wall:8,.0f} pages/s")
        ratio = best["resiliparse"] / best["mdf"]
        verdict = "MET" if ratio >= 1.5 else "not met"
        print(f"  {n:6,} pages  mdf / resiliparse {ratio:.2f}x   target >= 1.5x: {verdict}")
        print(f"  {n:6,} pages  mdf rules / resiliparse {best['resiliparse'] / best['mdf rules']:.2f}x")
    print(fixed_cost_line())  # beside the rates: a run's fixed cost, never read as a per-record one


if __name__ == "__main__":
    main()
