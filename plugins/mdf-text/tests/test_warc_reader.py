"""The ``warc`` reader on WARC files written here with warcio: fields, HTTP decoding, gzip layouts, damage, shards."""

from __future__ import annotations

import gzip
import itertools
import json
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("fastwarc", reason='the warc reader needs FastWARC: pip install "mdf-text[web]"')
pytest.importorskip("warcio", reason="the tests write WARC files with warcio: pip install warcio")

from warc_helpers import Capture, chunked, page, read_all, write_warc

from mdf import DAMAGED_INPUT, REASON, REASON_DETAIL
from mdf_text.io.warc import SCHEMA, WarcReader

HTML = [("Content-Type", "text/html; charset=ISO-8859-1")]


def captures() -> list[Capture]:
    gz = gzip.compress(page(2), mtime=0)
    return [
        Capture("http://a.example/1", page(1), HTML),
        Capture("http://a.example/2", chunked(gz), [("Content-Type", "text/html"), *_te_ce("chunked", "gzip")]),
        Capture(
            "http://a.example/3",
            zlib.compress(page(3)),
            [("Content-Type", "text/html"), ("Content-Encoding", "deflate")],
        ),
        # CommonCrawl: body already decoded by the crawler, original headers renamed: must stay as it is
        Capture("http://a.example/4", page(4), [("Content-Type", "text/html"), ("X-Crawler-Content-Encoding", "gzip")]),
        # header kept but body plainly not encoded (a crawler that decoded without renaming): kept as it is
        Capture("http://a.example/5", page(5), [("Content-Type", "text/html"), ("Content-Encoding", "gzip")]),
        Capture("http://a.example/req", b"", [("Host", "a.example")], status="GET / HTTP/1.1", record_type="request"),
        Capture("http://a.example/6.json", b'{"a": 1}', [("Content-Type", "application/json")]),
        Capture("http://a.example/gone", b"", [("Content-Type", "text/html")], status="404 Not Found"),
    ]


def _te_ce(te: str, ce: str) -> list[tuple[str, str]]:
    return [("Transfer-Encoding", te), ("Content-Encoding", ce)]


def test_fields_and_decoding(tmp_path: Path) -> None:
    path = tmp_path / "a.warc.gz"
    starts = write_warc(path, captures())
    table, bad = read_all(WarcReader(paths=[str(path)]))
    assert not bad
    assert table.schema == SCHEMA
    rows = table.to_pylist()
    assert [r["url"] for r in rows] == [c.url for c in captures() if c.record_type == "response"]
    assert [r["body"] for r in rows[:5]] == [page(1), page(2), page(3), page(4), page(5)]
    assert [r["http_status"] for r in rows] == [200, 200, 200, 200, 200, 200, 404]
    assert rows[0]["content_type"] == "text/html" and rows[0]["charset"] == "iso-8859-1"
    assert rows[1]["charset"] is None and rows[5]["content_type"] == "application/json"
    assert {r["warc_type"] for r in rows} == {"response"}
    assert rows[0]["date"] == datetime(2024, 3, 5, 10, 0, tzinfo=UTC)
    assert all(r["id"].startswith("<urn:uuid:") for r in rows) and len({r["id"] for r in rows}) == len(rows)
    assert {r["warc_file"] for r in rows} == {str(path)}
    response_starts = [s for s, c in zip(starts, captures(), strict=True) if c.record_type == "response"]
    assert [r["offset"] for r in rows] == response_starts  # CommonCrawl's index offset: the member start
    with open(path, "rb") as f:  # and each offset really opens its record
        for r in rows:
            f.seek(r["offset"])
            head = zlib.decompressobj(31).decompress(f.read(4096))
            assert r["id"].encode() in head.split(b"\r\n\r\n")[0]


@pytest.mark.parametrize("members", ["one", "pairs", "none"])
def test_gzip_layouts_give_the_same_rows(tmp_path: Path, members: str) -> None:
    """Several records per gzip member, or none compressed: same rows as one member per record."""
    ref, _ = read_all(WarcReader(paths=[_write(tmp_path / "ref.warc.gz", captures(), "record")]))
    path = _write(tmp_path / ("x.warc" if members == "none" else "x.warc.gz"), captures(), members)
    table, bad = read_all(WarcReader(paths=[path]))
    assert not bad
    cols = ["id", "url", "date", "http_status", "content_type", "charset", "body"]
    assert table.select(cols).equals(ref.select(cols))


def test_bad_content_encoding_is_one_rejected_row(tmp_path: Path) -> None:
    caps = [
        Capture("http://a.example/ok", page(1)),
        Capture("http://a.example/bad", b"\x1f\x8b\x08\x00garbage-not-deflate", [("Content-Encoding", "gzip")]),
        Capture("http://a.example/odd", b"\x00\x01\x02", [("Content-Encoding", "compress")]),
        Capture("http://a.example/after", page(2)),
    ]
    path = _write(tmp_path / "b.warc.gz", caps)
    table, bad = read_all(WarcReader(paths=[path]))
    assert table.column("url").to_pylist() == [c.url for c in caps]  # every record is a row...
    reasons = bad[0].column(REASON).to_pylist()  # ...and the undecodable ones carry a reason (countable) ...
    assert reasons == [None, "reader:bad_content_encoding", "reader:unsupported_content_encoding", None]
    details = bad[0].column(REASON_DETAIL).to_pylist()  # ... and the detail beside it
    assert details[1].startswith("gzip: ") and details[2] == "compress"


def test_record_types_and_mime_types(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.warc.gz", captures())
    table, _ = read_all(WarcReader(paths=[path], record_types=["response", "request"], mime_types=["text/*"]))
    assert table.column("warc_type").to_pylist().count("request") == 0  # a request has no content type
    assert set(table.column("content_type").to_pylist()) == {"text/html"}
    table, _ = read_all(WarcReader(paths=[path], record_types=["request"]))
    assert table.column("warc_type").to_pylist() == ["request"] and table.column("http_status").to_pylist() == [None]
    table, _ = read_all(WarcReader(paths=[path], mime_types=["application/json"]))
    assert table.column("url").to_pylist() == ["http://a.example/6.json"]


def test_wet_conversion_records_and_bracketed_uri(tmp_path: Path) -> None:
    text = b"Ein kurzer Text.\nZweite Zeile."
    caps = [
        Capture("<http://b.example/x>", text, [("Content-Type", "text/plain")], record_type="conversion"),
        Capture(
            "http://b.example/y", b"plain", [("Content-Type", "text/plain; charset=UTF-8")], record_type="resource"
        ),
    ]
    path = _write(tmp_path / "d.warc.wet.gz", caps)
    table, _ = read_all(WarcReader(paths=[path], record_types=["conversion", "resource"]))
    rows = table.to_pylist()
    assert [r["url"] for r in rows] == ["http://b.example/x", "http://b.example/y"]
    assert [r["warc_type"] for r in rows] == ["conversion", "resource"]
    assert rows[0]["body"] == text and rows[0]["http_status"] is None and rows[0]["content_type"] == "text/plain"
    assert rows[1]["charset"] == "utf-8"


@pytest.mark.parametrize("members", ["record", "none"])
def test_truncated_file_keeps_rows_before_and_reports_the_damage(tmp_path: Path, members: str) -> None:
    caps = [Capture(f"http://t.example/{i}", page(i, 400)) for i in range(5)]
    full = tmp_path / ("full.warc" if members == "none" else "full.warc.gz")
    starts = write_warc(full, caps, members)
    cut = tmp_path / ("cut.warc" if members == "none" else "cut.warc.gz")
    data = full.read_bytes()
    cut.write_bytes(data[: starts[3] + (starts[4] - starts[3]) // 2])  # the 4th record is cut in half
    table, bad = read_all(WarcReader(paths=[str(cut)]))
    assert table.column("url").to_pylist() == [c.url for c in caps[:3]]
    assert len(bad) == 1 and bad[0].num_rows == 1
    assert bad[0].column(REASON).to_pylist() == [DAMAGED_INPUT]
    raw = json.loads(bad[0].column("_raw")[0].as_py())
    assert raw["file"] == str(cut) and raw["offset"] == starts[3]
    assert ("truncated" if members == "none" else f"gzip member at byte {starts[3]} is cut short") in raw["error"]


def test_corrupt_member_in_the_middle(tmp_path: Path) -> None:
    """A member of bad deflate data is one damage row at its offset, and the reader goes on at the next member
    (issue 46 item 8: the records after it used to be lost with it)."""
    caps = [Capture(f"http://c.example/{i}", page(i, 400)) for i in range(5)]
    path = tmp_path / "corrupt.warc.gz"
    starts = write_warc(path, caps)
    data = bytearray(path.read_bytes())
    for i in range(starts[2] + 30, starts[2] + 60):
        data[i] ^= 0x5A  # garbage inside the deflate stream of the third record
    path.write_bytes(bytes(data))
    table, bad = read_all(WarcReader(paths=[str(path)]))
    assert table.column("url").to_pylist() == [caps[i].url for i in (0, 1, 3, 4)]
    assert [b.column(REASON)[0].as_py() for b in bad] == [DAMAGED_INPUT]
    assert json.loads(bad[0].column("_raw")[0].as_py())["offset"] == starts[2]


@pytest.mark.parametrize("members", ["record", "pairs", "none"])
def test_shards_cut_at_record_boundaries(tmp_path: Path, members: str) -> None:
    caps = [Capture(f"http://s.example/{i}", page(i, 50 + 37 * (i % 11))) for i in range(120)]
    # a page that quotes a WARC record (a crawl of WARC documentation): not a record boundary
    fake = (
        b"<pre>\r\nWARC/1.0\r\nWARC-Type: response\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n</pre>" * 250
    )  # spans several nominal cuts
    caps.insert(60, Capture("http://s.example/warc-doc", fake))
    path = _write(tmp_path / ("s.warc" if members == "none" else "s.warc.gz"), caps, members)
    whole, _ = read_all(WarcReader(paths=[path]))
    reader = WarcReader(paths=[path], bytes_per_shard=8_000)
    shards = reader.shards()
    assert len(shards) > 5 and len({s.id for s in shards}) == len(shards)
    assert shards[0].start == 0 and shards[-1].stop == Path(path).stat().st_size
    assert all(a.stop == b.start for a, b in itertools.pairwise(shards))
    parts = [read_all(_OneShard(reader, s))[0] for s in shards]
    for shard, part in zip(shards, parts, strict=True):
        assert part is not None and part.column("offset")[0].as_py() == shard.start
    joined = pa.concat_tables(parts)
    assert joined.column("id").to_pylist() == whole.column("id").to_pylist()
    assert joined.column("body").equals(whole.column("body"))


def test_batches_split_by_rows_and_by_body_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mdf_text.io.warc as warc

    caps = [Capture(f"http://m.example/{i}", page(i, 300 + 50 * (i % 5))) for i in range(30)]
    reader = WarcReader(paths=[_write(tmp_path / "m.warc.gz", caps)])
    (shard,) = reader.shards()
    by_rows = list(reader.read(shard, 7))
    assert [b.num_rows for b in by_rows] == [7, 7, 7, 7, 2]
    monkeypatch.setattr(warc, "_MAX_BATCH_BYTES", 10_000)  # about three bodies a batch
    by_bytes = list(reader.read(shard, 1000))
    assert len(by_bytes) > 5 and all(sum(map(len, b.column("body").to_pylist())) <= 10_000 for b in by_bytes)
    bodies = [x for b in by_bytes for x in b.column("body").to_pylist()]
    assert bodies == [page(i, 300 + 50 * (i % 5)) for i in range(30)]
    for b in by_bytes:
        b.validate(full=True)


def test_single_member_gzip_stays_one_shard(tmp_path: Path) -> None:
    path = _write(tmp_path / "one.warc.gz", [Capture(f"http://o.example/{i}", page(i)) for i in range(40)], "one")
    assert len(WarcReader(paths=[path], bytes_per_shard=4_000).shards()) == 1


def test_registered_by_the_plugin() -> None:
    from mdf.plugins import load_plugins

    assert load_plugins().readers.get("warc") is WarcReader


class _OneShard(WarcReader):
    """The reader restricted to one of its shards (to read shards separately, as loaders do)."""

    def __init__(self, reader: WarcReader, shard: object) -> None:
        self.params, self._shard = reader.params, shard

    def shards(self):  # type: ignore[no-untyped-def]
        return [self._shard]


def _write(path: Path, caps: list[Capture], members: str = "record") -> str:
    write_warc(path, caps, members)
    return str(path)


def test_missing_fastwarc_names_the_pip_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from mdf.errors import MissingDependencyError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "fastwarc" else real(name, *a))
    with pytest.raises(MissingDependencyError, match=r"pip install 'mdf-text\[web\]'"):
        WarcReader(paths=["x.warc.gz"])


def test_content_type_parsing() -> None:
    """Mime type lower-cased, charset unquoted and lower-cased, spaces around '=' allowed (FastWARC's own
    ``http_content_type``/``http_charset`` keep the case, keep the quotes and miss ``charset = x``)."""
    from mdf_text.io.warc_columns import content_types

    raw = ["Text/HTML; Charset=UTF-8", 'text/html;charset="ISO-8859-1"', "text/html; foo=bar; charset = utf-8 "]
    raw += ["", None, "application/xhtml+xml", "text/html; charset='windows-1252'"]
    mime, charset = content_types(raw)
    assert mime.to_pylist() == ["text/html"] * 3 + [None, None, "application/xhtml+xml", "text/html"]
    assert charset.to_pylist() == ["utf-8", "iso-8859-1", "utf-8", None, None, None, "windows-1252"]
