import pyarrow as pa
import pytest
from kernel_layouts import variants

import mdf_kernels as mk

xxhash = pytest.importorskip("xxhash")

TEXTS = ["hello", "", None, "Ünïcödé  Straße", "a" * 1000, "tab\tand\nnewline", "🙂 emoji", None]


@pytest.mark.parametrize("type_", [pa.string(), pa.large_string()])
def test_hash64_matches_xxhash(layout, type_):
    arr = variants(TEXTS, type_)[layout]
    got = mk.hash64(arr).to_pylist()
    want = [None if t is None else xxhash.xxh3_64_intdigest(t.encode()) for t in TEXTS]
    assert got == want
    assert mk.hash64(arr).type == pa.uint64()


@pytest.mark.parametrize("type_", [pa.binary(), pa.large_binary()])
def test_hash128_matches_xxhash_on_binary(layout, type_):
    rows = [b"\xff\xfe\x00invalid utf8", b"", None, b"\x80" * 100]
    arr = variants(rows, type_)[layout]
    got = mk.hash128(arr)
    assert got.type == pa.binary(16)
    assert got.to_pylist() == [None if r is None else xxhash.xxh3_128_digest(r) for r in rows]
    assert mk.hash64(arr).to_pylist() == [None if r is None else xxhash.xxh3_64_intdigest(r) for r in rows]


def test_one_megabyte_strings():
    big = ["x" * (1 << 20), "é" * (1 << 19)]
    assert mk.hash64(pa.array(big)).to_pylist() == [xxhash.xxh3_64_intdigest(s.encode()) for s in big]
    assert mk.hash128(pa.array(big)).to_pylist() == [xxhash.xxh3_128_digest(s.encode()) for s in big]


@pytest.mark.parametrize(
    ("mode", "text", "normalized"),
    [
        ("lower", "HeLLo  World", "hello  world"),
        ("nfc_ws", "  Cafe\u0301\t\n  au   LAIT ", "caf\u00e9 au lait"),
        ("alnum", "Don't -- stop!!  $5 «ok»", "dont stop 5 ok"),
        ("alnum", "!!!", ""),
    ],
)
def test_normalize_modes(mode, text, normalized):
    got = mk.hash64(pa.array([text, None]), normalize=mode).to_pylist()
    assert got == [xxhash.xxh3_64_intdigest(normalized.encode()), None]
    got128 = mk.hash128(pa.array([text]), normalize=mode).to_pylist()
    assert got128 == [xxhash.xxh3_128_digest(normalized.encode())]


def test_normalize_makes_near_duplicates_equal():
    h = mk.hash64(pa.array(["Hello, World!", "hello world", "HELLO   WORLD ..."]), normalize="alnum").to_pylist()
    assert len(set(h)) == 1


def test_normalize_rejected_on_binary_and_unknown_mode():
    with pytest.raises(ValueError, match="hash64: normalize"):
        mk.hash64(pa.array([b"x"]), normalize="lower")
    with pytest.raises(ValueError, match="hash64: normalize must be"):
        mk.hash64(pa.array(["x"]), normalize="upper")
    with pytest.raises(TypeError, match="hash128: normalize must be None or a str"):
        mk.hash128(pa.array(["x"]), normalize=3)


def test_invalid_utf8_in_string_column_does_not_crash():
    arr = pa.array([b"ok", b"\xff\xfe bad"], pa.binary()).view(pa.string())
    assert mk.hash64(arr).to_pylist() == [xxhash.xxh3_64_intdigest(b"ok"), xxhash.xxh3_64_intdigest(b"\xff\xfe bad")]
    assert len(mk.hash64(arr, normalize="alnum")) == 2


def test_empty_inputs():
    assert mk.hash64(pa.array([], pa.string())).to_pylist() == []
    assert mk.hash64(pa.chunked_array([], pa.string())).to_pylist() == []
    assert mk.hash128(pa.array([None, None], pa.string())).to_pylist() == [None, None]


def test_wrong_types():
    with pytest.raises(
        TypeError, match="hash64: expected a string, large_string, binary or large_binary array, got Int64"
    ):
        mk.hash64(pa.array([1, 2]))
    with pytest.raises(TypeError, match="hash64: arr must be a pyarrow Array or ChunkedArray, got list"):
        mk.hash64(["a"])
