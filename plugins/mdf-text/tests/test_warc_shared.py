"""Every real WARC file in ``../shared/data/warc`` read by the ``warc`` reader and by a bare FastWARC loop.

The files come from warcio's and FastWARC's own test suites (chunked bodies, a truncated record, several
records per gzip member, wrong chunk sizes, a real CommonCrawl crawl, a clipped gzip stream). For each file the
reader must give the same response records (count and URLs, in order) as FastWARC; for a damaged file, the
same records up to the damage plus exactly one ``reader:damaged_input`` row naming the file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("fastwarc", reason='the warc reader needs FastWARC: pip install "mdf-text[web]"')

from fastwarc.warc import ArchiveIterator, WarcRecordType
from warc_helpers import read_all

from mdf import DAMAGED_INPUT, REASON
from mdf_text.io.warc import WarcReader

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "warc"
FILES = sorted(SHARED.glob("*.warc*")) if SHARED.is_dir() else []
# damaged on purpose by their authors; every other file must read clean
DAMAGED = {"resili-clipped.warc.gz", "warcio-example-trunc.warc"}

pytestmark = pytest.mark.skipif(not FILES, reason=f"shared WARC files not found at {SHARED} (../shared absent)")


def fastwarc_responses(path: Path) -> tuple[list[str], list[bool], bool]:
    """URLs of the response records, whether each payload is complete, and whether iteration raised."""
    urls, complete = [], []
    try:
        for rec in ArchiveIterator(str(path), record_types=WarcRecordType.response):
            urls.append(rec.headers.get("WARC-Target-URI").strip("<>"))
            complete.append(len(rec.reader.read()) >= rec.content_length)
    except OSError:
        return urls, complete, True
    return urls, complete, False


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_same_responses_as_fastwarc(path: Path) -> None:
    urls, complete, raised = fastwarc_responses(path)
    table, bad = read_all(WarcReader(paths=[str(path)]))
    got = [] if table is None else table.column("url").to_pylist()
    damaged = [b for b in bad if "_raw" in b.schema.names]
    if path.name not in DAMAGED:
        assert not raised and all(complete)
        assert got == urls
        assert not damaged
        return
    # damaged: FastWARC raised, or yielded a record shorter than its Content-Length (a clipped stream)
    assert raised or not all(complete)
    good = urls[: complete.index(False)] if not all(complete) else urls
    assert got == good
    assert len(damaged) == 1 and damaged[0].num_rows == 1
    assert damaged[0].column(REASON).to_pylist() == [DAMAGED_INPUT]
    raw = json.loads(damaged[0].column("_raw")[0].as_py())
    assert raw["file"] == os.path.abspath(path) and isinstance(raw["offset"], int) and raw["error"]


@pytest.mark.skipif(not FILES, reason=f"shared WARC files not found at {SHARED} (../shared absent)")
def test_commoncrawl_file_fields() -> None:
    """The real CommonCrawl file: 16 responses, all HTML 200, charsets as the HTTP headers say."""
    path = SHARED / "resili-warcfile.warc.gz"
    table, bad = read_all(WarcReader(paths=[str(path)]))
    assert not bad and table.num_rows == 16
    assert set(table.column("http_status").to_pylist()) == {200}
    assert set(table.column("content_type").to_pylist()) == {"text/html"}
    assert "windows-1251" in table.column("charset").to_pylist()
    assert all(
        b.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"<" for b in table.column("body").to_pylist()
    )  # decoded HTML, not gzip
