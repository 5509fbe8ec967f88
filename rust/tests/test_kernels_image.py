"""Image kernels against Pillow, imagehash and numpy references, on scikit-image's photographs."""

import io
import os
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pytest

import mdf_kernels as mk

Image = pytest.importorskip("PIL.Image")
imagehash = pytest.importorskip("imagehash")
skdata = pytest.importorskip("skimage.data")

PHOTOS = ["astronaut", "camera", "coffee", "chelsea", "rocket", "hubble_deep_field", "immunohistochemistry"]
PHOTOS += ["retina", "brick", "grass", "gravel", "cell", "moon", "clock", "coins", "page", "text"]


def photo(name):
    im = Image.fromarray(getattr(skdata, name)())
    return im if im.mode in ("L", "RGB") else im.convert("RGB")


@pytest.fixture(scope="module")
def photos():
    return {n: photo(n) for n in PHOTOS}


def encode(im, fmt, **kw):
    out = io.BytesIO()
    im.save(out, fmt, **kw)
    return out.getvalue()


def scaled(im, side):
    f = side / max(im.size)
    return im.resize((max(1, round(im.width * f)), max(1, round(im.height * f))), Image.LANCZOS)


def bits(a, b):
    return bin(a ^ b).count("1")


# --- metadata -------------------------------------------------------------------------------


def _exif(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif.tobytes()


def metadata_cases(photos):
    rgb, grey = photos["coffee"], photos["camera"]
    small = scaled(rgb, 96)
    cases = {
        "jpeg rgb": encode(rgb, "JPEG"),
        "jpeg grey": encode(grey, "JPEG"),
        "jpeg cmyk": encode(small.convert("CMYK"), "JPEG"),
        "jpeg progressive": encode(rgb, "JPEG", progressive=True),
        "jpeg exif 6": encode(rgb, "JPEG", exif=_exif(6)),
        "png rgb": encode(small, "PNG"),
        "png rgba": encode(small.convert("RGBA"), "PNG"),
        "png la": encode(small.convert("LA"), "PNG"),
        "png l": encode(grey, "PNG"),
        "png 1": encode(grey.convert("1"), "PNG"),
        "png p": encode(small.convert("P"), "PNG"),
        "png i16": encode(Image.fromarray(np.asarray(grey, np.uint16) * 200), "PNG"),
        "png exif 3": encode(small, "PNG", exif=_exif(3)),
        "webp lossy": encode(small, "WEBP", quality=80),
        "webp lossless rgba": encode(small.convert("RGBA"), "WEBP", lossless=True),
        "webp exif 8": encode(small, "WEBP", exif=_exif(8)),
        "gif p": encode(small.convert("P"), "GIF"),
        "gif grey": encode(grey, "GIF"),
    }
    return cases


def test_metadata_matches_pillow(photos):
    cases = metadata_cases(photos)
    got = mk.image_metadata(pa.array(list(cases.values()), pa.binary())).to_pylist()
    for (name, blob), row in zip(cases.items(), got, strict=True):
        im = Image.open(io.BytesIO(blob))
        want = {
            "format": im.format.lower(),
            "width": im.width,
            "height": im.height,
            "mode": im.mode,
            "orientation": im.getexif().get(0x0112, 1),
            "num_bytes": len(blob),
            "error": None,
        }
        assert row == want, name
    assert {r["orientation"] for r in got} == {1, 3, 6, 8}


def bad_inputs(photos):
    jpeg = encode(scaled(photos["astronaut"], 300), "JPEG")
    png_head = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + (100_000).to_bytes(4, "big") * 2 + b"\x08\x02\0\0\0"
    bomb = png_head + b"\0\0\0\0" + b"\0\0\0\0IDAT" + b"\0" * 64
    return {
        "text": (b"this is not an image, just some bytes", "unsupported_format"),
        "empty": (b"", "empty"),
        "bmp": (encode(photos["camera"], "BMP"), "unsupported_format"),
        "tiff": (encode(photos["camera"], "TIFF"), "unsupported_format"),
        "png bomb": (bomb, "too_many_pixels"),
        "jpeg header cut": (jpeg[:150], "decode_error: "),
        "jpeg scan cut": (jpeg[: len(jpeg) // 2], "decode_error: "),
        "png data cut": (encode(photos["camera"], "PNG")[:5000], "decode_error: "),
        "null": (None, None),
    }


@pytest.mark.parametrize("kernel", ["metadata", "quality", "hashes"])
def test_bad_rows_get_an_error_and_nulls(photos, kernel):
    cases = bad_inputs(photos)
    fn = {"metadata": mk.image_metadata, "quality": mk.image_quality, "hashes": mk.image_hashes}[kernel]
    t0 = time.perf_counter()
    got = fn(pa.array([b for b, _ in cases.values()], pa.binary())).to_pylist()
    assert time.perf_counter() - t0 < 5  # the bomb is refused from its header
    for (name, (_, err)), row in zip(cases.items(), got, strict=True):
        if err is None:
            assert row is None
            continue
        if kernel == "metadata" and name in ("jpeg scan cut", "png data cut"):
            assert row["error"] is None, name  # the header is intact: metadata does not decode
            continue
        assert row["error"] is not None and row["error"].startswith(err), (name, row)
        assert [k for k, v in row.items() if v is not None] == ["error"], name
    thumbs = mk.image_thumbnails(pa.array([b for b, _ in cases.values()], pa.binary()), size=16)
    assert thumbs.null_count == len(cases)


def test_max_pixels_argument(photos):
    blob = encode(scaled(photos["coffee"], 200), "PNG")  # 200 x 133
    arr = pa.array([blob])
    assert mk.image_metadata(arr, max_pixels=200 * 133)[0]["error"].as_py() is None
    assert mk.image_metadata(arr, max_pixels=200 * 133 - 1)[0]["error"].as_py() == "too_many_pixels"
    assert mk.image_hashes(arr, max_pixels=100)[0]["error"].as_py() == "too_many_pixels"
    assert mk.MAX_PIXELS == 2 * Image.MAX_IMAGE_PIXELS  # where Pillow raises DecompressionBombError
    with pytest.raises(ValueError, match="max_pixels"):
        mk.image_metadata(arr, max_pixels=0)
    with pytest.raises(TypeError, match="blobs"):
        mk.image_metadata([blob])


# --- hashes ---------------------------------------------------------------------------------


def imagehash_ints(blob):
    im = Image.open(io.BytesIO(blob))
    return int(str(imagehash.phash(im)), 16), int(str(imagehash.dhash(im)), 16)


def test_hashes_equal_imagehash_on_small_lossless_images(photos):
    # At most 255 px a side: no pre-reduction, and lossless pixels are identical for both decoders.
    blobs = [encode(scaled(im, side), "PNG") for im in photos.values() for side in (64, 150, 255)]
    blobs += [encode(scaled(im, 200), "WEBP", lossless=True) for im in photos.values()]
    blobs += [encode(scaled(im, 200).convert("RGBA"), "PNG") for im in photos.values()]
    blobs += [encode(scaled(im, 200), "GIF") for im in photos.values()]
    got = mk.image_hashes(pa.array(blobs)).to_pylist()
    for blob, row in zip(blobs, got, strict=True):
        p, d = imagehash_ints(blob)
        assert row["dhash"] == d
        assert bits(row["phash"], p) <= 2  # only median ties under float rounding may differ


def test_phash_agrees_with_imagehash_on_jpegs(photos):
    blobs = [
        encode(scaled(im, side), "JPEG", quality=q)
        for im in photos.values()
        for side in (256, 512, 1024)
        for q in (50, 90)
    ]
    got = mk.image_hashes(pa.array(blobs)).to_pylist()
    ref = [imagehash_ints(b) for b in blobs]
    p_ok = np.mean([bits(g["phash"], r[0]) <= 2 for g, r in zip(got, ref, strict=True)])
    d_ok = np.mean([bits(g["dhash"], r[1]) <= 4 for g, r in zip(got, ref, strict=True)])
    assert p_ok >= 0.95, p_ok
    assert d_ok >= 0.9, d_ok


def test_cmyk_jpegs_decode_like_pillow(photos):
    blobs = [encode(scaled(photos[n], 300).convert("CMYK"), "JPEG") for n in ("coffee", "rocket", "astronaut")]
    hashes = mk.image_hashes(pa.array(blobs)).to_pylist()
    quality = mk.image_quality(pa.array(blobs)).to_pylist()
    for blob, h, q in zip(blobs, hashes, quality, strict=True):
        assert bits(h["phash"], imagehash_ints(blob)[0]) <= 2
        assert q["brightness"] == pytest.approx(reference_quality(blob)["brightness"], abs=1.0)


def test_phash_crop_matches_cropped_copies(photos):
    plain, crossed = [], []
    for im in photos.values():
        im = scaled(im, 512)
        dx, dy = round(im.width * 0.05), round(im.height * 0.05)
        crop = im.crop((dx, dy, im.width - dx, im.height - dy))
        h = mk.image_hashes(pa.array([encode(im, "JPEG", quality=90), encode(crop, "JPEG", quality=90)]))
        (a, b) = h.to_pylist()
        plain.append(bits(a["phash"], b["phash"]))
        crossed.append(bits(a["phash_crop"], b["phash"]))
    assert np.mean(crossed) < np.mean(plain) / 2, (plain, crossed)


def test_hash_layouts_and_large_binary(photos):
    blobs = [encode(scaled(im, 200), "JPEG") for im in list(photos.values())[:6]] + [None]
    want = mk.image_hashes(pa.array(blobs, pa.binary())).to_pylist()
    chunked = pa.chunked_array([pa.array(blobs[:3], pa.large_binary()), pa.array(blobs[3:], pa.large_binary())])
    assert mk.image_hashes(chunked).to_pylist() == want
    padded = pa.array([b"x", *blobs, b"y"], pa.binary()).slice(1, len(blobs))
    assert mk.image_hashes(padded).to_pylist() == want
    assert mk.image_metadata(chunked).to_pylist() == mk.image_metadata(pa.array(blobs)).to_pylist()


# --- quality --------------------------------------------------------------------------------


def reference_quality(blob, max_side=512):
    """The documented definitions in numpy, on Pillow-decoded pixels."""
    rgb_im = Image.open(io.BytesIO(blob)).convert("RGB")
    grey = np.asarray(rgb_im.convert("L"), np.float64)
    h, w = grey.shape
    dx, dy = np.abs(np.diff(grey, axis=1)), np.abs(np.diff(grey, axis=0))
    across = np.concatenate([dx[:, 7::8].ravel(), dy[7::8, :].ravel()])
    inside = np.concatenate([np.delete(dx, np.s_[7::8], axis=1).ravel(), np.delete(dy, np.s_[7::8], axis=0).ravel()])
    blockiness = (across.mean() + 0.01) / (inside.mean() + 0.01)
    k = -(-max(w, h) // max_side)
    small = rgb_im.reduce(k) if k > 1 else rgb_im
    rgb = np.asarray(small, np.float64)
    g = np.asarray(small.convert("L"), np.float64)
    lap = g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] - 4 * g[1:-1, 1:-1]
    p = np.bincount(g.astype(np.int64).ravel(), minlength=256) / g.size
    p = p[p > 0]
    rg, yb = rgb[..., 0] - rgb[..., 1], (rgb[..., 0] + rgb[..., 1]) / 2 - rgb[..., 2]
    return {
        "sharpness": lap.var(),
        "entropy": -(p * np.log2(p)).sum(),
        "brightness": g.mean(),
        "contrast": g.std(),
        "colorfulness": np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean()),
        "blockiness": blockiness,
        "width": w,
        "height": h,
    }


def test_quality_matches_numpy_reference_on_lossless_images(photos):
    # PNG: both sides decode identical pixels, so only the reduction's rounding may differ.
    blobs = [encode(scaled(im, side), "PNG") for im in photos.values() for side in (300, 700)]
    got = mk.image_quality(pa.array(blobs)).to_pylist()
    for blob, row in zip(blobs, got, strict=True):
        ref = reference_quality(blob)
        assert row.pop("error") is None
        assert row == pytest.approx(ref, rel=1e-3, abs=1e-3)


def test_quality_on_jpegs_close_to_reference_and_blockiness_rises(photos):
    rows = []
    for im in photos.values():
        im = scaled(im, 640)
        blobs = [encode(im, "JPEG", quality=95), encode(im, "JPEG", quality=10)]
        got = mk.image_quality(pa.array(blobs)).to_pylist()
        for blob, row in zip(blobs, got, strict=True):
            ref = reference_quality(blob)
            # Different JPEG decoders (zune-jpeg vs libjpeg-turbo): pixels differ by a grey level.
            assert row["brightness"] == pytest.approx(ref["brightness"], abs=1.0)
            assert row["contrast"] == pytest.approx(ref["contrast"], abs=1.0)
            assert row["entropy"] == pytest.approx(ref["entropy"], abs=0.05)
            assert row["colorfulness"] == pytest.approx(ref["colorfulness"], abs=1.5)
            assert row["sharpness"] == pytest.approx(ref["sharpness"], rel=0.05, abs=1.0)
            assert row["blockiness"] == pytest.approx(ref["blockiness"], rel=0.05)
        rows.append((got[0]["blockiness"], got[1]["blockiness"]))
    assert all(low_q > high_q for high_q, low_q in rows), rows
    assert np.median([high_q for high_q, _ in rows]) < 1.3


# --- thumbnails, MIH keys, threads -----------------------------------------------------------


def test_thumbnails_equal_pillow_bilinear(photos):
    ims = [scaled(photos["coffee"], 60), photos["camera"].resize((50, 40)), scaled(photos["chelsea"], 30)]
    blobs = [encode(im, "PNG") for im in ims]
    got = mk.image_thumbnails(pa.array(blobs), size=24)
    assert got.type == pa.list_(pa.uint8(), 24 * 24 * 3)
    for im, row in zip(ims, got.to_pylist(), strict=True):
        want = np.asarray(im.convert("RGB").resize((24, 24), Image.BILINEAR)).ravel()
        assert np.array_equal(np.array(row, np.uint8), want)
    # Larger images are box-reduced first, exactly as Pillow's reducing_gap=2 does.
    for im in (photos["astronaut"], photos["coffee"], photos["page"]):
        big = mk.image_thumbnails(pa.array([encode(im, "PNG")]), size=32)
        want = np.asarray(im.convert("RGB").resize((32, 32), Image.BILINEAR, reducing_gap=2.0)).ravel()
        assert np.array_equal(np.array(big[0].as_py(), np.uint8), want)


def test_mih_block_keys_pigeonhole():
    rng = np.random.default_rng(5)
    for m in (0, 1, 5, 6, 10, 63):
        base = rng.integers(0, 2**64, size=300, dtype=np.uint64)
        flips = [rng.choice(64, size=rng.integers(0, m + 1), replace=False) for _ in base]
        near = np.array([int(b) ^ sum(1 << int(f) for f in fl) for b, fl in zip(base, flips, strict=True)], np.uint64)
        ka = np.asarray(mk.mih_block_keys(pa.array(base), m)).reshape(-1, m + 1)
        kb = np.asarray(mk.mih_block_keys(pa.array(near), m)).reshape(-1, m + 1)
        assert (ka == kb).any(axis=1).all()
        # Unrelated hashes rarely share a key when blocks are long.
        if m <= 6:
            assert (ka == np.roll(kb, 1, axis=0)).any(axis=1).mean() < 0.05
    keys = mk.mih_block_keys(pa.array([1, None], pa.uint64()), 2)
    assert keys.to_pylist()[3:] == [None] * 3 and keys.null_count == 3
    with pytest.raises(ValueError, match="max_hamming"):
        mk.mih_block_keys(pa.array([1], pa.uint64()), 64)


def test_same_results_with_one_and_two_threads(tmp_path, photos):
    blobs = [encode(scaled(im, 300), "JPEG") for im in photos.values()]
    path = tmp_path / "blobs.arrow"
    with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(f, pa.schema([("b", pa.binary())])) as w:
        w.write_table(pa.table({"b": blobs}))
    code = (
        "import sys, pyarrow as pa, mdf_kernels as mk\n"
        f"b = pa.ipc.open_file({str(path)!r}).read_all()['b']\n"
        "print(mk.num_threads(), mk.image_hashes(b).to_pylist(), mk.image_quality(b).to_pylist(),"
        " mk.image_metadata(b).to_pylist())\n"
    )
    outs = []
    for n in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-c", code], env={**os.environ, "MDF_NUM_THREADS": n}, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        threads, rest = proc.stdout.split(" ", 1)
        assert threads == n
        outs.append(rest)
    assert outs[0] == outs[1]


def test_corrupted_files_never_raise(photos):
    rng = np.random.default_rng(11)
    im = scaled(photos["chelsea"], 120)
    seeds = [
        encode(im, "JPEG"),
        encode(im, "JPEG", progressive=True),
        encode(im, "PNG"),
        encode(im.convert("P"), "GIF"),
        encode(im, "WEBP", quality=70),
        encode(im, "WEBP", lossless=True),
    ]
    blobs = []
    for blob in seeds:
        for _ in range(40):
            b = bytearray(blob[: rng.integers(1, len(blob) + 1)])
            for pos in rng.integers(0, len(b), size=rng.integers(0, 6)):
                b[pos] = rng.integers(0, 256)
            blobs.append(bytes(b))
    arr = pa.array(blobs, pa.binary())
    for fn in (mk.image_metadata, mk.image_quality, mk.image_hashes):
        for row in fn(arr).to_pylist():
            values = [v for k, v in row.items() if k != "error"]
            assert (row["error"] is None) == all(v is not None for v in values), row
            assert row["error"] is None or all(v is None for v in values), row
    assert len(mk.image_thumbnails(arr, size=8)) == len(blobs)
