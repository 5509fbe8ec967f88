"""The ``warc`` reader accounts for every byte: a file cut inside a record it skips is damaged input, and
``offset`` + ``member_index`` find every row's record again with FastWARC (issue 29 item 3, issue 23 item 7)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("fastwarc", reason='the warc reader needs FastWARC: pip install "mdf-text[web]"')
pytest.importorskip("warcio", reason="the tests write WARC files with warcio: pip install warcio")

from fastwarc.warc import ArchiveIterator, WarcRecordType
from warc_helpers import Capture, page, read_all, record_bytes, write_warc

from mdf import DAMAGED_INPUT, REASON
from mdf_text.io.warc import WarcReader

PDF = [("Content-Type", "application/pdf")]


def crawl(n: int, last: str) -> list[Capture]:
    """``n`` CommonCrawl-like captures (request, response, metadata), then one record of kind ``last``."""
    out: list[Capture] = []
    for i in range(n):
        url = f"http://d.example/{i}"
        out.append(Capture(url, b"", [("Host", "d.example")], status="GET / HTTP/1.1", record_type="request"))
        out.append(Capture(url, page(i)))
        out.append(
            Capture(url, b"fetchTimeMs: 12\r\n" * 40, [("Content-Type", "application/warc-fields")], "", "metadata")
        )
    tail = {
        "request": Capture("http://d.example/z", b"x=1" * 300, [("Host", "d.example")], "POST / HTTP/1.1", "request"),
        "metadata": Capture("http://d.example/z", b"languages: en\r\n" * 80, [("Content-Type", "a/b")], "", "metadata"),
        "pdf": Capture("http://d.example/z.pdf", os.urandom(3000), PDF),
    }[last]
    return [*out, tail]


def cut_file(tmp_path: Path, layout: str, last: str, where: str) -> tuple[Path, int]:
    """A crawl whose last record (a kind the reader skips) is damaged ``where``; returns the file and the
    offset the damage must be reported at (the last record's start, or its gzip member's)."""
    caps = crawl(3, last)
    records = [record_bytes(c) for c in caps]
    tail = records[-1]
    head_end = tail.index(b"\r\n\r\n")
    keep = {"header": head_end // 2, "body": head_end + 4 + (len(tail) - head_end) // 2}[where]
    path = tmp_path / f"cut-{layout}-{last}-{where}.warc{'' if layout == 'none' else '.gz'}"
    if layout == "none":
        data = b"".join(records)
        start = len(data) - len(tail)
        path.write_bytes(data[: start + keep])
        return path, start
    if layout == "record":  # each record its own member, the last one's member cut in its compressed bytes
        members = [gzip.compress(r, mtime=0) for r in records]
        start = sum(len(m) for m in members[:-1])
        last_member = members[-1]
        cut = {"header": 12, "body": len(last_member) // 2}[where]
        path.write_bytes(b"".join(members[:-1]) + last_member[:cut])
        return path, start
    # "pairs": the last member holds the last two records, whole as gzip, but its record is cut short
    members = [gzip.compress(b"".join(records[i : i + 2]), mtime=0) for i in range(0, len(records) - 2, 2)]
    start = sum(len(m) for m in members)
    members.append(gzip.compress(records[-2] + tail[:keep], mtime=0))
    path.write_bytes(b"".join(members))
    return path, start


@pytest.mark.parametrize("where", ["header", "body"])
@pytest.mark.parametrize("last", ["request", "metadata", "pdf"])
@pytest.mark.parametrize("layout", ["none", "record", "pairs"])
def test_a_cut_inside_a_skipped_record_is_damaged_input(tmp_path: Path, layout: str, last: str, where: str) -> None:
    """Fails on the old reader (FastWARC asked for responses only never reads the others, and stops quietly at a
    cut gzip member or header): 0 damaged rows for every case here: seen."""
    path, start = cut_file(tmp_path, layout, last, where)
    table, bad = read_all(WarcReader(paths=[str(path)], mime_types=["text/html"]))
    assert table is not None and table.column("url").to_pylist() == [f"http://d.example/{i}" for i in range(3)]
    assert [b.column(REASON).to_pylist() for b in bad] == [[DAMAGED_INPUT]]
    raw = json.loads(bad[0].column("_raw")[0].as_py())
    assert raw["file"] == str(path) and raw["offset"] == start, raw
    assert "truncated" in raw["error"] or "cut short" in raw["error"], raw


@pytest.mark.parametrize("layout", ["none", "record", "pairs", "one"])
def test_whole_files_report_no_damage(tmp_path: Path, layout: str) -> None:
    path = tmp_path / ("w.warc" if layout == "none" else "w.warc.gz")
    write_warc(path, crawl(4, "metadata"), layout)
    for types in (["response"], ["request", "metadata"], ["warcinfo"]):
        _, bad = read_all(WarcReader(paths=[str(path)], record_types=types))
        assert bad == []


def test_a_shard_cut_inside_a_skipped_record_is_damaged(tmp_path: Path) -> None:
    """With ``bytes_per_shard``, the last shard ends at the file's end: its cut skipped record is reported."""
    path, start = cut_file(tmp_path, "record", "metadata", "body")
    reader = WarcReader(paths=[str(path)], bytes_per_shard=1500)
    assert len(reader.shards()) > 1
    table, bad = read_all(reader)
    assert table is not None and table.num_rows == 3
    assert [json.loads(b.column("_raw")[0].as_py())["offset"] for b in bad] == [start]


def test_strict_run_fails_on_a_cut_skipped_record(tmp_path: Path) -> None:
    """``mdf run --strict`` on a crawl cut inside its last metadata record: exit 0 and no damage on the old
    reader: seen. Now exit 1 naming the file."""
    path, _ = cut_file(tmp_path, "record", "metadata", "body")
    recipe = {
        "reader": {"type": "warc", "paths": [str(path)]},
        "stages": [{"name": "s", "operators": [{"text_length_filter": {"column": "url", "min_length": 1}}]}],
        "writer": {"type": "parquet", "path": "out"},
        "rejected": {"type": "parquet", "path": "rejected"},
        "executor": {"type": "inline"},
    }
    (tmp_path / "recipe.yaml").write_text(yaml.safe_dump(recipe))
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mdf.cli"]
    proc = subprocess.run(
        [*cmd, "run", "-q", "recipe.yaml", "--strict"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert f"damaged input: {path}" in proc.stderr


@pytest.mark.parametrize("layout", ["none", "record", "pairs", "one"])
def test_offset_and_member_index_find_each_record_with_fastwarc(tmp_path: Path, layout: str) -> None:
    """Seek to each row's ``offset``, skip ``member_index`` records: FastWARC yields the row's record. Fails on
    the old reader (no ``member_index``, and its offset was FastWARC's ``stream_pos``, which is not the member
    holding the record once a member holds several: in ``pairs`` the second record of the first member said
    944, the next member; in ``one`` every record after the first said 3716, the end of the file): seen."""
    path = tmp_path / ("f.warc" if layout == "none" else "f.warc.gz")
    write_warc(path, crawl(5, "metadata"), layout)
    table, bad = read_all(WarcReader(paths=[str(path)], record_types=["response", "metadata"]))
    assert bad == [] and table is not None and table.num_rows == 11
    with open(path, "rb") as f:
        for row in table.select(["id", "offset", "member_index"]).to_pylist():
            f.seek(row["offset"])
            records = ArchiveIterator(f, record_types=WarcRecordType.any_type, parse_http=False)
            for _ in range(row["member_index"]):
                next(records)
            assert next(records).record_id == row["id"], row
    if layout in ("pairs", "one"):
        assert max(table.column("member_index").to_pylist()) > 0
