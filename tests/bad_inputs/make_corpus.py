"""Write the bad-input corpus: every way an input file went wrong in issue 13's hostile-user pass.

``python tests/bad_inputs/make_corpus.py DIR`` writes ``DIR/jsonl/`` and ``DIR/parquet/`` (one folder per
reader, each with a non-data file beside the data) and ``DIR/expected.json``: for each file, the rows a reader
must deliver (``rows``: kept or rejected by operators), reader rejections (``reader_rejects``) and damaged-input
rows (``damaged``), computed here from the bytes written, independently of mdf's readers. ``None`` means the
exact count depends on the decompressor (a corrupt frame may emit garbage lines before it is detected); the
accounting ``rows in = kept + rejected + damaged`` must hold regardless. Generated at test time, never in git.
"""

from __future__ import annotations

import gzip
import json
import sys
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

WORDS = ["the", "data", "factory", "keeps", "every", "row", "it", "reads", "and", "says", "where", "each", "one"]


def records(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Web-like records: long enough texts that a length filter keeps most, a few short ones it drops."""
    out = []
    for i in range(n):
        words = 5 + (i * 7 + seed) % 60
        text = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(words))
        out.append({"id": f"{seed}-{i}", "url": f"https://site{i % 13}.example/p/{i}", "text": text})
    return out


def lines(recs: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in recs)


def complete_lines(prefix: bytes) -> int:
    """Whole lines in the decodable prefix of a damaged stream: what a reader can still deliver."""
    return prefix.count(b"\n")


def hostile_values(good: int = 40) -> bytes:
    """``good`` + 1 records Arrow reads (one with a valid surrogate pair) and 5 it refuses, mixed in."""
    recs = [{**r, "n": i} for i, r in enumerate(records(good, seed=7))]
    bad = [
        b'{"id": "s1", "url": "https://a.example/", "text": "a lone \\ud83d surrogate in scraped text", "n": 1}',
        b'{"id": "b1", "url": "https://a.example/", "text": "an integer above int64", "n": 123456789012345678901}',
        b'{"id": "d1", "url": "https://a.example/", "text": "deep", "n": 2, "x": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}",
        b'{"id": "p1", "url": "https://a.example/", "text": "a pair \\ud83d\\ude00 is fine here, long enough", "n": 3}',
        b'{"id": "k1", "url": "https://a.example/", "text": "a lone surrogate in a key", "\\udc80": 4}',
        b'{"id": "l1", "url": "https://a.example/", "text": "5,000 digits", "n": ' + b"7" * 5000 + b"}",
    ]
    out = [json.dumps(r).encode() for r in recs]
    for i, line in enumerate(bad):
        out.insert(7 + 9 * i, line)
    return b"\n".join(out) + b"\n"


def make_jsonl(folder: Path) -> dict[str, dict[str, Any]]:
    folder.mkdir(parents=True, exist_ok=True)
    exp: dict[str, dict[str, Any]] = {}
    data = lines(records(5000, seed=1))

    # item 2: a .jsonl.zst cut in half used to read 1,585 of 5,000 rows and exit 0 "balanced"
    z = zstandard.ZstdCompressor().compress(data)
    (folder / "cut.jsonl.zst").write_bytes(z[: len(z) // 2])
    prefix = zstandard.ZstdDecompressor().decompressobj().decompress(z[: len(z) // 2])
    exp["cut.jsonl.zst"] = {"rows": complete_lines(prefix), "reader_rejects": 0, "damaged": 1}

    # item 6: a truncated .jsonl.gz used to exit 130 "aborted" (an EOFError became click's Abort)
    g = gzip.compress(data)
    (folder / "cut.jsonl.gz").write_bytes(g[: len(g) // 2])
    prefix = zlib.decompressobj(31).decompress(g[: len(g) // 2])
    exp["cut.jsonl.gz"] = {"rows": complete_lines(prefix), "reader_rejects": 0, "damaged": 1}

    # a bad deflate block in the middle of a gzip member
    g = bytearray(gzip.compress(lines(records(3000, seed=2))))
    mid = len(g) // 2
    g[mid : mid + 32] = b"\xff" * 32
    (folder / "badframe.jsonl.gz").write_bytes(bytes(g))
    exp["badframe.jsonl.gz"] = {"rows": None, "reader_rejects": None, "damaged": 1}

    # a corrupt zstd block (the frame checksum catches what the block decoder lets through)
    z = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(lines(records(3000, seed=3))))
    mid = len(z) // 2
    z[mid : mid + 32] = b"\x00" * 32
    (folder / "badframe.jsonl.zst").write_bytes(bytes(z))
    exp["badframe.jsonl.zst"] = {"rows": None, "reader_rejects": None, "damaged": 1}

    # item 4: "text": 42 in record 1 used to type the column int64 and reject the 30 good records after it
    recs = records(30, seed=4)
    (folder / "typed_first.jsonl").write_bytes(lines([{"id": "t-0", "url": "https://a.example/", "text": 42}, *recs]))
    exp["typed_first.jsonl"] = {"rows": 30, "reader_rejects": 1, "damaged": 0}

    # non-UTF-8 lines, broken JSON, a line that is not an object
    good = records(20, seed=5)
    bad = [b'{"id": "l1", "text": "caf\xe9 latin-1"}', b'{"id": "b1", "text": "no end', b"[1, 2, 3]"]
    body = b"".join(lines([r]) + (bad[i] + b"\n" if i < len(bad) else b"") for i, r in enumerate(good))
    (folder / "mixed.jsonl").write_bytes(body)
    exp["mixed.jsonl"] = {"rows": 20, "reader_rejects": 3, "damaged": 0}

    # issue 29 item 5: values Arrow refuses used to end the whole run (a lone surrogate: UnicodeEncodeError, an
    # integer above int64: OverflowError, 100 K nested "[": SIGSEGV; a surrogate in a key, an integer of 5,000
    # digits: UnicodeEncodeError, ValueError); now one reader:bad_value row each
    (folder / "hostile_values.jsonl").write_bytes(hostile_values())
    exp["hostile_values.jsonl"] = {"rows": 41, "reader_rejects": 5, "damaged": 0}

    # empty and zero-row files
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "blank.jsonl").write_bytes(b"\n\n\n")
    (folder / "empty.jsonl.gz").write_bytes(gzip.compress(b""))
    (folder / "zero_bytes.jsonl.zst").write_bytes(b"")
    for name in ("empty.jsonl", "blank.jsonl", "empty.jsonl.gz", "zero_bytes.jsonl.zst"):
        exp[name] = {"rows": 0, "reader_rejects": 0, "damaged": 0}

    # item 11: a folder input used to read every file as JSONL
    (folder / "README.txt").write_text("not data: a folder input must not read this\n")
    (folder / "notes.csv").write_text("a,b\n1,2\n")
    return exp


def make_parquet(folder: Path) -> dict[str, dict[str, Any]]:
    folder.mkdir(parents=True, exist_ok=True)
    exp: dict[str, dict[str, Any]] = {}
    table = pa.Table.from_pylist(records(3000, seed=6))
    pq.write_table(table, folder / "good.parquet", row_group_size=1000, compression="zstd")
    exp["good.parquet"] = {"rows": 3000, "reader_rejects": 0, "damaged": 0}

    # a corrupt footer (the last bytes: footer length and magic)
    raw = bytearray((folder / "good.parquet").read_bytes())
    raw[-12:] = b"\x00" * 12
    (folder / "footer.parquet").write_bytes(bytes(raw))
    exp["footer.parquet"] = {"rows": 0, "reader_rejects": 0, "damaged": 1}

    # a page header that fails to decode in row group 1 of 3: row group 0 is read, then the damage
    pq.write_table(table, folder / "page.parquet", row_group_size=1000, compression="zstd")
    meta = pq.read_metadata(folder / "page.parquet")
    col = meta.row_group(1).column(meta.num_columns - 1)
    raw = bytearray((folder / "page.parquet").read_bytes())
    raw[col.data_page_offset : col.data_page_offset + 24] = b"\xff" * 24
    (folder / "page.parquet").write_bytes(bytes(raw))
    exp["page.parquet"] = {"rows": 1000, "reader_rejects": 0, "damaged": 1}

    (folder / "zero_bytes.parquet").write_bytes(b"")
    exp["zero_bytes.parquet"] = {"rows": 0, "reader_rejects": 0, "damaged": 1}
    pq.write_table(table.slice(0, 0), folder / "zero_rows.parquet")
    exp["zero_rows.parquet"] = {"rows": 0, "reader_rejects": 0, "damaged": 0}

    (folder / "README.txt").write_text("not data\n")
    return exp


def make(root: Path) -> dict[str, dict[str, dict[str, Any]]]:
    expected = {"jsonl": make_jsonl(root / "jsonl"), "parquet": make_parquet(root / "parquet")}
    (root / "expected.json").write_text(json.dumps(expected, indent=1))
    return expected


if __name__ == "__main__":
    make(Path(sys.argv[1] if len(sys.argv) > 1 else "bad_inputs_corpus"))
