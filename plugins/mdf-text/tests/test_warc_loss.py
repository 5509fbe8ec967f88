"""A damaged WARC costs its damaged parts and nothing else, on every path the ``warc`` reader takes: the Rust
kernel (plain and gzip files, when ``mdf-kernels`` is installed) and FastWARC with the recovery walker (every
file without the kernels; zstd files always). Issue 46 items 7 and 8.

Every record is exactly one of: a kept row, a row rejected with a reason (``reader:bad_http``,
``reader:bad_warc_header``, ``reader:record_too_large``), or inside one ``reader:damaged_input`` row; and the
records after a damaged part are read. Real CommonCrawl records (``../shared/data/warc``) where the case allows,
generated damage where it must be placed.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

pytest.importorskip("fastwarc", reason='the warc reader needs FastWARC: pip install "mdf-text[web]"')
pytest.importorskip("warcio", reason="the tests write WARC files with warcio: pip install warcio")

import zstandard
from warc_helpers import Capture, crawl, members, page, record_bytes, warc_record

from mdf import DAMAGED_INPUT, REASON, has_native_kernel
from mdf_text.io import warc_native
from mdf_text.io.warc import WarcReader

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "warc"
CC = SHARED / "resili-warcfile.warc.gz"


@pytest.fixture(params=["kernel", "fastwarc"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "kernel" and not has_native_kernel("WarcScanner"):
        pytest.skip("mdf-kernels without WarcScanner")
    if request.param == "fastwarc":
        monkeypatch.setattr(warc_native, "available", lambda: False)
    return str(request.param)


def read(path: Path, batch_rows: int = 7, **params: object) -> tuple[list[dict], list[dict]]:
    """Every row (kept ones, and rejected ones with ``_reason``) and every damage entry, in order."""
    reader = WarcReader(paths=[str(path)], **params)
    rows: list[dict] = []
    damages: list[dict] = []
    for shard in reader.shards():
        for batch in reader.read(shard, batch_rows):
            if "_raw" in batch.schema.names:
                assert batch.column(REASON).to_pylist() == [DAMAGED_INPUT] * batch.num_rows
                damages += [json.loads(r) for r in batch.column("_raw").to_pylist()]
            else:
                rows += batch.to_pylist()
    return rows, damages


def cc_records() -> list[bytes]:
    """The 50 records of the real CommonCrawl file, one per gzip member, uncompressed."""
    if not CC.exists():
        pytest.skip(f"shared WARC files not found at {SHARED}")
    data, out, at = CC.read_bytes(), [], 0
    while at < len(data):
        d = zlib.decompressobj(31)
        out.append(d.decompress(data[at:]))
        at = len(data) - len(d.unused_data)
    return out


def zstd_file(path: Path, records: list[bytes], layout: str) -> list[int]:
    """``records`` as a ``.warc.zst``: a frame per record (``frames``), one frame (``one``), or frames made
    with a dictionary stored first in a skippable frame (``dict``, the WARC zstd convention). Returns each
    record's frame offset."""
    if layout == "one":
        path.write_bytes(zstandard.ZstdCompressor().compress(b"".join(records)))
        return [0] * len(records)
    head, cctx = b"", zstandard.ZstdCompressor(write_checksum=True)
    if layout == "dict":
        raw = records[0][:4096]
        head = (0x184D2A5D).to_bytes(4, "little") + len(raw).to_bytes(4, "little") + raw
        cctx = zstandard.ZstdCompressor(dict_data=zstandard.ZstdCompressionDict(raw), write_checksum=True)
    frames = [cctx.compress(r) for r in records]
    path.write_bytes(head + b"".join(frames))
    return [len(head) + sum(len(f) for f in frames[:i]) for i in range(len(frames))]


@pytest.mark.parametrize("layout", ["frames", "one", "dict"])
def test_a_valid_zstd_warc_reads_whole_and_like_its_gzip(engine: str, tmp_path: Path, layout: str) -> None:
    """Seen red on eefbc81: every valid ``.warc.zst`` got a false damage row at its end ("no WARC record at byte
    ...: found b'(\\xb5/\\xfd..."), so ``--strict`` failed a good file. Now: the gzip file's rows, byte for byte,
    each at its frame's offset, and no damage."""
    records = cc_records()
    path = tmp_path / "cc.warc.zst"
    offsets = zstd_file(path, records, layout)
    rows, damages = read(path, record_types=["response", "request", "metadata", "warcinfo"])
    want, _ = read(CC, record_types=["response", "request", "metadata", "warcinfo"])
    assert damages == []
    assert [(r["id"], r["body"]) for r in rows] == [(r["id"], r["body"]) for r in want]
    by_id = {rec.split(b"WARC-Record-ID: ", 1)[1].split(b"\r\n", 1)[0].decode(): i for i, rec in enumerate(records)}
    assert [r["offset"] for r in rows] == [offsets[by_id[r["id"]]] for r in rows]


@pytest.mark.parametrize("layout", ["frames", "one"])
def test_a_zstd_warc_cut_at_two_thirds_keeps_its_intact_records(engine: str, tmp_path: Path, layout: str) -> None:
    """Seen red on eefbc81: the file cut at 2/3 kept none of its records ("unreadable WARC data at byte 0 ...:
    incomplete frame") where the same file as .gz kept them. Now the records before the cut frame (or, in one
    frame, before the record the cut falls in) are kept, and one damage row names the cut frame."""
    records = cc_records()
    path = tmp_path / "cut.warc.zst"
    offsets = zstd_file(path, records, layout)
    data = path.read_bytes()
    cut = len(data) * 2 // 3
    path.write_bytes(data[:cut])
    rows, damages = read(path, record_types=["response", "request", "metadata", "warcinfo"])
    assert len(damages) == 1 and "cut short" in damages[0]["error"], damages
    whole = [i for i in range(len(records)) if (offsets[i + 1] if i + 1 < len(records) else len(data)) <= cut]
    if layout == "frames":
        assert damages[0]["offset"] == max(o for o in offsets if o < cut)
        assert len(rows) == len(whole)
    else:  # zstd hands on whole blocks: at least the records of the first third
        assert damages[0]["offset"] == 0 and len(rows) >= len(records) // 3
    want, _ = read(CC, record_types=["response", "request", "metadata", "warcinfo"])
    assert [r["body"] for r in rows] == [r["body"] for r in want[: len(rows)]]


def test_a_bad_zstd_frame_costs_its_record_alone(engine: str, tmp_path: Path) -> None:
    """Bytes flipped inside frame 20 of a ``.warc.zst`` (frames with checksums): one damage row at that frame,
    the 49 other records kept. Seen red on eefbc81: FastWARC stopped at the bad frame, 20 rows, the 29 records
    after it lost, and the damage reported at the frame before it (63260, not 63704)."""
    records = cc_records()
    path = tmp_path / "bad.warc.zst"
    offsets = zstd_file(path, records, "frames")
    data = bytearray(path.read_bytes())
    for j in range(offsets[20] + 40, offsets[20] + 44):
        data[j] ^= 0x5A
    path.write_bytes(bytes(data))
    types = ["response", "request", "metadata", "warcinfo"]
    rows, damages = read(path, record_types=types)
    assert [d["offset"] for d in damages] == [offsets[20]] and "zstd" in damages[0]["error"], damages
    want, _ = read(CC, record_types=types)
    lost = records[20].split(b"WARC-Record-ID: ", 1)[1].split(b"\r\n", 1)[0].decode()
    assert [r["id"] for r in rows] == [r["id"] for r in want if r["id"] != lost]


def test_strict_run_passes_a_valid_zstd_warc(tmp_path: Path) -> None:
    """Seen red on eefbc81: ``mdf run --strict`` exit 1, "damaged input: .../cc.warc.zst" on a whole file."""
    zstd_file(tmp_path / "cc.warc.zst", cc_records(), "frames")
    recipe = {
        "reader": {"type": "warc", "paths": ["cc.warc.zst"]},
        "stages": [{"name": "s", "operators": [{"text_length_filter": {"column": "url", "min_length": 1}}]}],
        "writer": {"type": "parquet", "path": "out"},
        "executor": {"type": "inline"},
    }
    (tmp_path / "recipe.yaml").write_text(json.dumps(recipe))
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mdf.cli"]
    proc = subprocess.run([*cmd, "run", "-q", "recipe.yaml", "--strict"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


def accounted(rows: list[dict], damages: list[dict], n: int, bodies: dict[str, bytes]) -> None:
    """Every record exactly once: rows (as written) plus damage entries is the count of records."""
    assert len(rows) + len(damages) == n, (len(rows), damages)
    for r in rows:
        assert r["body"] == bodies[r["url"]], r["url"]


@pytest.mark.parametrize("where", [0.1, 0.3, 0.5, 0.7, 0.9, 0.97])
def test_flipped_bytes_in_a_member_cost_that_record_alone(engine: str, tmp_path: Path, where: float) -> None:
    """Seen red on eefbc81: with bytes of member 50 of 101 flipped, the kernel kept record 50 (an empty page with
    status 200, or garbage) *and* a damage row for it, and every record after it was lost (51 rows, 102 counted
    with the damage row); the FastWARC path lost the 50 after it too. Now record 50 is one damage row at its
    member, and the other 100 are kept as written."""
    records = crawl(101)
    parts = members(records)
    bad = bytearray(parts[50])
    k = int(len(bad) * where)
    for j in range(k, min(k + 4, len(bad))):
        bad[j] ^= 0xA5
    path = tmp_path / "flip.warc.gz"
    path.write_bytes(b"".join(parts[:50]) + bytes(bad) + b"".join(parts[51:]))
    rows, damages = read(path)
    accounted(rows, damages, 101, {f"http://d.example/{i}": page(i) for i in range(101)})
    assert [d["offset"] for d in damages] == [sum(map(len, parts[:50]))]


@pytest.mark.parametrize("compressed", [False, True])
def test_a_record_without_content_length_is_one_damage_row(engine: str, tmp_path: Path, compressed: bool) -> None:
    """Seen red on eefbc81: the record was kept as an empty page *and* reported damaged, and the 5 intact records
    after it were lost. Now it is one damage row at its offset and the reader goes on at the next record."""
    records = crawl(16)
    records[10] = records[10].replace(b"\r\nContent-Length: ", b"\r\nX-Length: ", 1)
    path = tmp_path / ("nocl.warc.gz" if compressed else "nocl.warc")
    parts = members(records) if compressed else records
    path.write_bytes(b"".join(parts))
    rows, damages = read(path)
    assert [r["url"] for r in rows] == [f"http://d.example/{i}" for i in range(16) if i != 10]
    assert len(damages) == 1 and damages[0]["offset"] == sum(map(len, parts[:10]))
    assert "has no valid Content-Length" in damages[0]["error"]


@pytest.mark.parametrize("block", [b"<html>no head</html>", b"Content-Type: text/html\r\n\r\n<p>x</p>", b"\r\nx"])
def test_a_response_without_a_status_line_is_rejected_as_bad_http(engine: str, tmp_path: Path, block: bytes) -> None:
    """Seen red on eefbc81: kept as a page with no status and no reason. Now rejected, ``reader:bad_http``,
    the detail saying why; the records around it are kept."""
    records = crawl(3)
    path = tmp_path / "nostatus.warc"
    path.write_bytes(records[0] + warc_record(block) + records[1] + records[2])
    rows, damages = read(path)
    assert damages == [] and len(rows) == 4
    bad = [r for r in rows if r.get("_reason")]
    assert [(r["url"], r["_reason"], r["_reason_detail"]) for r in bad] == [
        ("http://d.example/odd", "reader:bad_http", "no HTTP status line")
    ]


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("where", ["warc", "http"])
def test_a_2_mb_header_rejects_its_record_and_keeps_the_rest(
    engine: str, tmp_path: Path, where: str, compressed: bool
) -> None:
    """Seen red on eefbc81: the records after a 2 MB header were lost into one damage row ("Maximum header length
    exceeded.") although the framing is whole. Now that record alone is rejected (``reader:bad_warc_header`` or
    ``reader:bad_http``) and the five after it are kept."""
    filler = b"a" * (2 << 20)
    if where == "warc":
        odd = warc_record(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>x</p>", extra=b"X-Big: " + filler + b"\r\n"
        )
    else:
        odd = warc_record(b"HTTP/1.1 200 OK\r\nSet-Cookie: " + filler + b"\r\nContent-Type: text/html\r\n\r\n<p>x</p>")
    records = crawl(8)
    parts = [*records[:3], odd, *records[3:]]
    path = tmp_path / ("big.warc.gz" if compressed else "big.warc")
    path.write_bytes(b"".join(members(parts) if compressed else parts))
    rows, damages = read(path)
    assert damages == []
    assert [r["url"] for r in rows] == [f"http://d.example/{i}" for i in range(3)] + ["http://d.example/odd"] + [
        f"http://d.example/{i}" for i in range(3, 8)
    ]
    reason = "reader:bad_warc_header" if where == "warc" else "reader:bad_http"
    assert [r.get("_reason") for r in rows] == [None] * 3 + [reason] + [None] * 5


BOMB = """
import sys
from mdf_text.io import warc_native
if sys.argv[2] == "fastwarc":
    warc_native.available = lambda: False
from mdf_text.io.warc import WarcReader

reader = WarcReader(paths=[sys.argv[1]])
reasons = []
for shard in reader.shards():
    for batch in reader.read(shard, 1000):
        reasons += batch.column("_reason").to_pylist() if "_reason" in batch.schema.names else [None] * batch.num_rows
# VmHWM, not ru_maxrss: ru_maxrss survives exec, so a child forked from a big test process starts at its size
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(reasons, peak // 1024)
"""


@pytest.mark.parametrize("bomb", ["member", "content-encoding"])
def test_a_200_mb_gzip_bomb_is_rejected_in_bounded_memory(engine: str, tmp_path: Path, bomb: str) -> None:
    """A record of 200 MB of zeros in one ~200 KB gzip member (``member``), or a 200 KB body whose
    ``Content-Encoding: gzip`` inflates to 200 MB (``content-encoding``), between two pages. Seen red on eefbc81
    (this child's VmHWM): no reason, the record kept whole, peak 505 MB / 758 MB on the kernel and 554 MB / 554 MB
    on the FastWARC path. Now the record is one row rejected ``reader:record_too_large`` (``max_record_bytes``,
    64 MiB by default), the pages are kept, and the peak does not grow with the record: 156 / 281 MB (kernel),
    240 / 262 MB (FastWARC path), of which ~80 MB is the interpreter and pyarrow."""
    zeros = bytes(200 << 20)
    if bomb == "member":
        odd = warc_record(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + zeros, url="http://d.example/bomb")
    else:
        body = gzip.compress(zeros, compresslevel=9, mtime=0)
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n"
        odd = warc_record(head + body, url="http://d.example/bomb")
    del zeros
    records = crawl(2)
    path = tmp_path / "bomb.warc.gz"
    path.write_bytes(b"".join(members([records[0], odd, records[1]])))
    del odd
    env = {**os.environ, "MALLOC_ARENA_MAX": "2"}
    proc = subprocess.run([sys.executable, "-c", BOMB, str(path), engine], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    reasons, peak_mb = proc.stdout.rsplit(" ", 1)
    assert reasons == "[None, 'reader:record_too_large', None]"
    assert int(peak_mb) < 400, f"peak RSS {peak_mb} MB reading a 200 MB record"


def both(monkeypatch: pytest.MonkeyPatch, path: Path, **params: object) -> tuple[tuple, tuple]:
    """(kernel, FastWARC) reads of ``path``, every row and damage entry."""
    out = []
    for native in (True, False):
        with monkeypatch.context() as m:
            if not native:
                m.setattr(warc_native, "available", lambda: False)
            out.append(read(path, **params))
    return out[0], out[1]


LAYOUTS = {"plain": None, "record": 1, "pairs": 2, "one": 10_000}


def damaged_crawls(seed: int, layout: str) -> list[bytes]:
    """Crawls of a dozen mixed records, each damaged once at a seeded place: a byte flipped, dropped or added,
    a Content-Length removed, garbage between records, a header or HTTP head made long."""
    import random

    rng = random.Random(seed)
    caps = [Capture(f"http://p.example/{i}", page(i, 30 + 17 * i)) for i in range(10)]
    caps.insert(3, Capture("http://p.example/m", b"fetchTimeMs: 1\r\n" * 9, [("Content-Type", "a/b")], "", "metadata"))
    caps.insert(7, Capture("http://p.example/pdf", bytes(range(256)) * 3, [("Content-Type", "application/pdf")]))
    records = [record_bytes(c) for c in caps]
    i = rng.randrange(len(records))
    how = rng.choice(["flip", "drop", "add", "nocl", "garbage", "longhead", "nostatus"])
    r = bytearray(records[i])
    if how == "nocl":
        r = bytearray(bytes(r).replace(b"\r\nContent-Length: ", b"\r\nContent-Lengthx: ", 1))
    elif how == "garbage":
        r += b"no record here\r\n" * rng.randrange(1, 4)
    elif how == "longhead":
        r = bytearray(bytes(r).replace(b"\r\n\r\n", b"\r\nX-Pad: " + b"p" * 40_000 + b"\r\n\r\n", 1))
    elif how == "nostatus":
        r = bytearray(bytes(r).replace(b"HTTP/1.1 200 OK\r\n", b"", 1))
    records[i] = bytes(r)
    group = LAYOUTS[layout]
    if group is None:
        data = bytearray(b"".join(records))
    else:
        data = bytearray(
            b"".join(gzip.compress(b"".join(records[k : k + group]), mtime=0) for k in range(0, len(records), group))
        )
    if how in ("flip", "drop", "add"):
        k = rng.randrange(len(data))
        if how == "flip":
            data[k] ^= 1 << rng.randrange(8)
        elif how == "drop":
            del data[k]
        else:
            data.insert(k, rng.randrange(256))
    return [bytes(data)]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_damaged_crawls_read_the_same_on_both_paths(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, layout: str
) -> None:
    """The recovery walker follows the kernel's rules word for word: 40 seeded damaged crawls per layout, every
    row (with its reason) and every damage entry (offset and message) the same on both paths, and every record
    accounted for by the kernel's rules."""
    if not has_native_kernel("WarcScanner"):
        pytest.skip("mdf-kernels without WarcScanner")
    path = tmp_path / ("d.warc" if layout == "plain" else "d.warc.gz")
    for seed in range(40):
        (data,) = damaged_crawls(seed, layout)
        path.write_bytes(data)
        for params in ({}, {"record_types": ["response", "metadata"], "mime_types": ["text/*", "a/b"]}):
            kernel, fastwarc = both(monkeypatch, path, **params)
            assert kernel == fastwarc, (seed, params)
