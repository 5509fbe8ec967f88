"""The ``warc`` reader's body buffers come back to the kernel when a batch is dropped, so a long read does not
fault in fresh pages for every batch (``mdf_kernels`` ``recycle.rs``).

Why a test by page faults and not by time: the cost was the kernel's, one minor fault and a zeroed page per
4 KiB of bodies, and whether glibc happened to reuse a freed 16 MiB block depended on what else the process had
allocated (the same read took 0.013 or 0.030 CPU s). The child process fixes glibc's mmap threshold
(``MALLOC_MMAP_THRESHOLD_``) so every big block is a fresh mapping. Seen red with ``Pool::give`` keeping
nothing: the three reads faulted in every body page, 17,378 faults (plain) and 18,074 (gzip) against a bound
of 1,724 (5,750 and 6,272 with glibc's default threshold). With the pool: 1 and 55-294.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("warcio", reason="the test writes WARC files with warcio: pip install warcio")

from warc_helpers import Capture, page, write_warc

from mdf import has_native_kernel

pytestmark = pytest.mark.skipif(not has_native_kernel("WarcScanner"), reason="mdf-kernels without WarcScanner")

CHILD = """
import resource, sys
from mdf_text.io.warc import WarcReader

reader = WarcReader(paths=[sys.argv[1]])

def read():
    rows = 0
    for shard in reader.shards():
        for batch in reader.read(shard, 1024):
            rows += batch.num_rows
    return rows

rows = read()
before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
for _ in range(3):
    assert read() == rows
print(rows, resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before)
"""


@pytest.mark.parametrize("members", ["none", "record"])
def test_a_read_reuses_the_body_buffers_of_dropped_batches(tmp_path: Path, members: str) -> None:
    bodies = [page(i, words=2700) for i in range(700)]  # ~21 MB of bodies: two batches of at most 16 MiB
    captures = [Capture(f"https://example.com/{i}", b) for i, b in enumerate(bodies)]
    path = tmp_path / ("a.warc" if members == "none" else "a.warc.gz")
    write_warc(path, captures, members=members)
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(128 << 10)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows, faults = map(int, out.stdout.split())
    assert rows == 700
    body_pages = 3 * sum(map(len, bodies)) // 4096
    assert faults < body_pages // 10, f"{faults} minor faults over 3 reads of {body_pages} body pages"
