"""The ``warc`` reader (FastWARC from Python, Arrow batches out) vs a bare FastWARC loop and vs warcio.

Same files, one process pinned to one core, runs interleaved, best of ``--repeat`` in CPU seconds:

* ``mdf``: ``WarcReader.read`` on every shard -> Arrow batches of id, url, date, status, content type, charset,
  decoded body, file, offset (what a pipeline gets), on the Rust kernel ``mdf_kernels.WarcScanner``;
* ``mdf-py``: the same reader without the kernel (its FastWARC path, as before the kernel);
* ``fastwarc``: the bare loop ``for r in ArchiveIterator(path, record_types=response): r.reader.read()``
  (FastWARC's defaults; bodies read, nothing kept);
* ``fw+arrow``: the FastWARC loop a user writes to get the same table: the same fields appended to lists,
  ``auto_decode="all"`` (FastWARC decodes the bodies), one ``pa.table`` per 1,024 records;
* ``warcio``: ``for r in ArchiveIterator(f): if r.rec_type == "response": r.content_stream().read()`` (bodies
  de-chunked and content-decoded, as mdf's are).

Files: the real CommonCrawl file of ``../shared/data/warc/resili-warcfile.warc.gz`` (16 responses, 50
records) repeated to ~``--mb`` MB (gzip members concatenate into a valid WARC.gz), the same uncompressed, and
the demo generator's CommonCrawl-like file. Generated once into ``benchmarks/.data/``.

Run: python benchmarks/bench_warc_read.py [--repeat 5] [--mb 40]
Targets (issue 14): mdf >= the bare FastWARC loop, mdf >= 5x warcio.
"""

from __future__ import annotations

import argparse
import gzip
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / ".data" / "warc"
SHARED_CC = ROOT / ".." / "shared" / "data" / "warc" / "resili-warcfile.warc.gz"


def make_files(mb: int) -> list[Path]:
    DATA.mkdir(parents=True, exist_ok=True)
    files = []
    if SHARED_CC.exists():
        one = SHARED_CC.read_bytes()
        reps = max(1, (mb << 20) // (len(one) * 4))  # ~4x compression: about `mb` MB uncompressed
        gz = DATA / f"cc-x{mb}mb.warc.gz"
        if not gz.exists():
            gz.write_bytes(one * reps)
        plain = DATA / f"cc-x{mb}mb.warc"
        if not plain.exists():  # the file's inflated bytes repeated: gzip.decompress of the repeated members
            plain.write_bytes(gzip.decompress(one) * reps)  # is quadratic in Python 3.11 (hours at --mb 400)
        files += [gz, plain]
    else:
        print(f"(no {SHARED_CC}: only the generated demo file is used)")
    demo = DATA / "demo" / "demo-00000.warc.gz"
    if not demo.exists():
        from mdf_text.demo_warc import write_warc

        write_warc(str(demo.parent), pages=4000, seed=11)
    return [*files, demo]


def run_mdf(path: Path) -> tuple[int, int]:
    from mdf_text.io.warc import WarcReader

    reader = WarcReader(paths=[str(path)])
    n = nbytes = 0
    for shard in reader.shards():
        for batch in reader.read(shard, 1024):
            n += batch.num_rows
            nbytes += batch.column("body").nbytes
    return n, nbytes


def run_mdf_python(path: Path) -> tuple[int, int]:
    """The reader without the Rust kernel (its FastWARC path: what it was before, and is without mdf-kernels)."""
    from mdf_text.io import warc_native

    available = warc_native.available
    warc_native.available = lambda: False  # type: ignore[assignment]
    try:
        return run_mdf(path)
    finally:
        warc_native.available = available  # type: ignore[assignment]


def run_fastwarc(path: Path) -> tuple[int, int]:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    n = nbytes = 0
    for rec in ArchiveIterator(str(path), record_types=WarcRecordType.response):
        nbytes += len(rec.reader.read())
        n += 1
    return n, nbytes


def run_fastwarc_arrow(path: Path) -> tuple[int, int]:
    import pyarrow as pa
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    n = nbytes = 0
    cols: dict[str, list] = {k: [] for k in ("id", "url", "date", "status", "ctype", "charset", "body", "offset")}

    def flush() -> int:
        table = pa.table({k: pa.array(v, pa.binary() if k == "body" else None) for k, v in cols.items()})
        for v in cols.values():
            v.clear()
        return table.column("body").nbytes

    for rec in ArchiveIterator(str(path), record_types=WarcRecordType.response, auto_decode="all"):
        h = rec.headers
        cols["id"].append(rec.record_id)
        cols["url"].append(h.get("WARC-Target-URI"))
        cols["date"].append(h.get("WARC-Date"))
        cols["status"].append(rec.http_headers.status_code)
        cols["ctype"].append(rec.http_content_type)
        cols["charset"].append(rec.http_charset)
        cols["body"].append(rec.reader.read())
        cols["offset"].append(rec.stream_pos)
        n += 1
        if len(cols["id"]) == 1024:
            nbytes += flush()
    return n, nbytes + flush()


def run_warcio(path: Path) -> tuple[int, int]:
    from warcio.archiveiterator import ArchiveIterator

    n = nbytes = 0
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f):
            if rec.rec_type == "response":
                nbytes += len(rec.content_stream().read())
                n += 1
    return n, nbytes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--mb", type=int, default=40, help="uncompressed size of the repeated CommonCrawl file")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core for everyone
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; pinned to one core")
    contenders = {
        "mdf": run_mdf,
        "mdf-py": run_mdf_python,
        "fastwarc": run_fastwarc,
        "fw+arrow": run_fastwarc_arrow,
        "warcio": run_warcio,
    }
    for path in make_files(args.mb):
        best = dict.fromkeys(contenders, float("inf"))
        counts = {}
        for _ in range(args.repeat):
            for name, fn in contenders.items():
                t = time.process_time()  # CPU time: the machine is shared, wall time measures the neighbours
                counts[name] = fn(path)
                best[name] = min(best[name], time.process_time() - t)
        n = counts["fastwarc"][0]
        assert counts["mdf"] == counts["mdf-py"], counts
        assert counts["mdf"][0] == n == counts["warcio"][0] == counts["fw+arrow"][0], counts
        size = path.stat().st_size
        print(f"\n{path.name}: {size / 1e6:.1f} MB on disk, {n:,} responses")
        for name in contenders:
            print(
                f"  {name:9s} {n / best[name]:>10,.0f} rec/s  {size / best[name] / 1e6:>7.1f} MB/s  {best[name]:.3f} CPU s"
            )
        print(
            f"  mdf / fastwarc loop = {best['fastwarc'] / best['mdf']:.2f}x (target >= 1.0; without the kernel "
            f"{best['fastwarc'] / best['mdf-py']:.2f}x)   "
            f"mdf / fw+arrow = {best['fw+arrow'] / best['mdf']:.2f}x   "
            f"mdf / warcio = {best['warcio'] / best['mdf']:.1f}x (target >= 5)"
        )


if __name__ == "__main__":
    main()
