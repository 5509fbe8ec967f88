"""Test images from real photographs: a near-duplicate set with ground truth, bad inputs, format variants.

The photographs are the ones scikit-image ships in its wheel (astronaut, coffee, retina, ...), encoded with
Pillow, so tests and benchmarks run on camera images without downloading anything. Write a set to disk with::

    python -m mdf_image.testdata OUT_DIR            # OUT_DIR/laion/*.parquet, OUT_DIR/folder/, OUT_DIR/webdataset/

Needs ``pip install 'mdf-image[testdata]'`` (Pillow, scikit-image).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import struct
import tarfile
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ORIGINALS = (
    *("astronaut", "camera", "coffee", "chelsea", "rocket", "coins"),
    *("immunohistochemistry", "hubble_deep_field", "retina", "stereo_motorcycle"),
)
"""Photographs that get near-duplicate copies (one group each)."""
NEGATIVE_PHOTOS = ("moon", "clock", "cell", "grass", "gravel", "brick")
"""Further photographs used once, as distinct images."""
TILE_SOURCES = (
    *("retina", "hubble_deep_field", "stereo_motorcycle", "astronaut", "coffee"),
    *("rocket", "immunohistochemistry", "gravel", "brick", "cell", "camera", "moon"),
)
"""Photographs cut into tiles: each tile is a distinct image (a different region of the scene)."""
TRANSFORMS = ("resize_half", "jpeg_q30", "crop_5pct", "brightness_up20", "hflip")
"""Near-duplicate copies made of each original; ``hflip`` mirrors, which a plain pHash does not survive."""

_EXT = ((b"\xff\xd8\xff", "jpg"), (b"\x89PNG", "png"), (b"GIF8", "gif"), (b"RIFF", "webp"))


def photo(name: str) -> Any:
    """The scikit-image photograph ``name`` as a PIL image (RGB, or L for grey ones)."""
    import skimage.data
    from PIL import Image

    arr = getattr(skimage.data, name)()
    if isinstance(arr, tuple):  # stereo pairs: the left view
        arr = arr[0]
    return Image.fromarray(np.ascontiguousarray(arr))


def encode(img: Any, fmt: str = "JPEG", **options: Any) -> bytes:
    buf = io.BytesIO()
    if fmt == "JPEG" and img.mode not in ("RGB", "L"):
        img = img.convert("RGB")
    img.save(buf, fmt, **options)
    return buf.getvalue()


def transformed(img: Any, name: str) -> bytes:
    """JPEG bytes of ``img`` after transform ``name`` (one of :data:`TRANSFORMS`, or ``original``)."""
    from PIL import Image, ImageEnhance, ImageOps

    w, h = img.size
    ops: dict[str, Callable[[], Any]] = {
        "original": lambda: img,
        "resize_half": lambda: img.resize((w // 2, h // 2), Image.Resampling.LANCZOS),
        "jpeg_q30": lambda: img,
        "crop_5pct": lambda: img.crop((round(w * 0.05), round(h * 0.05), round(w * 0.95), round(h * 0.95))),
        "brightness_up20": lambda: ImageEnhance.Brightness(img).enhance(1.2),
        "hflip": lambda: ImageOps.mirror(img),
    }
    return encode(ops[name](), quality=30 if name == "jpeg_q30" else 90)


def near_duplicate_set(
    originals: Sequence[str] = ORIGINALS,
    transforms: Sequence[str] = TRANSFORMS,
    negatives: bool = True,
    min_negative_distance: int = 16,
) -> pa.Table:
    """Real photographs, their near-duplicate copies, and distinct negatives, with the ground truth.

    Each name in ``originals`` gives one group: the photo (``transform = "original"``) and one JPEG per name in
    ``transforms`` (half size, JPEG quality 30, 5 % cropped off each side, 20 % brighter, mirrored). With
    ``negatives``, distinct images follow, each in a group of its own: other photographs and tiles (different
    regions) of the large ones. A candidate negative is kept only if the 64-bit DCT pHash of it, of its centre
    crop and of its mirror image is more than ``min_negative_distance`` bits from those of every image kept
    before it (and flat tiles are skipped), so no negative is a near-duplicate of anything by accident.

    :return: a table with one row per image: ``id`` (``source/transform`` or ``source/tile_rRcC``), ``image``
        (JPEG bytes, ``large_binary``), ``group`` (int32: equal for near-duplicates, unique for negatives),
        ``source`` (photo name), ``transform`` (``original``, a transform name, or ``tile`` / ``photo``).
    """
    rows: list[dict[str, Any]] = []
    hashes: list[np.ndarray] = []
    for group, name in enumerate(originals):
        img = photo(name)
        for t in ("original", *transforms):
            rows.append({"id": f"{name}/{t}", "image": transformed(img, t), "group": group, "source": name})
            rows[-1]["transform"] = t
        hashes.append(_hashes(img))
    if negatives:
        for source, label, img in _negative_candidates(originals):
            h = _hashes(img)
            if hashes and min(_min_distance(h, other) for other in hashes) <= min_negative_distance:
                continue
            hashes.append(h)  # originals first: negative k is group len(originals) + k
            data = encode(img, quality=90)
            kind = "photo" if label == "photo" else "tile"
            rows.append({"id": f"{source}/{label}", "image": data, "group": len(hashes) - 1, "source": source})
            rows[-1]["transform"] = kind
    return _table(rows)


def bad_inputs() -> pa.Table:
    """Rows every image operator must reject, with the reason it must give (``expected_reason``, a prefix).

    Non-image bytes, a JPEG cut in half, a PNG whose header claims 100,000 x 100,000 pixels (valid CRCs, so only
    the pixel limit stops it), an empty blob, and a BMP and a TIFF (formats the kernels do not read).
    """
    jpeg = encode(photo("astronaut"), quality=90)
    small = photo("chelsea").resize((64, 43))
    cases = [
        ("bad/not_an_image", b"<html><body>404 not found</body></html>\n" * 20, "unsupported_format"),
        ("bad/truncated_jpeg", jpeg[: len(jpeg) // 2], "decode_error:truncated"),
        ("bad/huge_png", huge_png(100_000, 100_000), "too_many_pixels"),
        ("bad/empty", b"", "empty"),
        ("bad/bmp", encode(small, "BMP"), "unsupported_format"),
        ("bad/tiff", encode(small, "TIFF"), "unsupported_format"),
    ]
    return pa.table(
        {
            "id": [c[0] for c in cases],
            "image": pa.array([c[1] for c in cases], pa.large_binary()),
            "expected_reason": [c[2] for c in cases],
        }
    )


def example_set(bad: bool = True) -> pa.Table:
    """:func:`near_duplicate_set` followed by :func:`bad_inputs` in one table (what the example recipe reads).

    Columns of both, with ``expected_reason`` null for the good rows and ``group`` null and ``source``
    ``"bad"`` for the bad ones.
    """
    good = near_duplicate_set()
    good = good.append_column("expected_reason", pa.nulls(good.num_rows, pa.string()))
    if not bad:
        return good
    b = bad_inputs()
    n = b.num_rows
    b = pa.table(
        {
            "id": b["id"],
            "image": b["image"],
            "group": pa.nulls(n, pa.int32()),
            "source": pa.array(["bad"] * n),
            "transform": pa.array(["bad"] * n),
            "expected_reason": b["expected_reason"],
        }
    )
    return pa.concat_tables([good, b])


def huge_png(width: int, height: int) -> bytes:
    """A well-formed PNG header (signature, IHDR with its CRC, a tiny IDAT, IEND) claiming ``width x height``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    idat = zlib.compress(b"\x00" * 64)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def format_variants(name: str = "chelsea") -> pa.Table:
    """One photograph in every readable format and mode, with what its header says (from Pillow).

    Columns ``id``, ``image``, ``format`` (jpeg, png, webp, gif), ``mode`` (Pillow's), ``width``, ``height``,
    ``orientation`` (EXIF, 1 when absent).
    """
    from PIL import Image

    img = photo(name)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display
    variants = [
        ("jpeg_rgb", encode(img, quality=90), "jpeg", 1),
        ("jpeg_grey", encode(img.convert("L"), quality=90), "jpeg", 1),
        ("jpeg_exif_rotated", encode(img, quality=90, exif=exif), "jpeg", 6),
        ("png_rgb", encode(img, "PNG"), "png", 1),
        ("png_rgba", encode(img.convert("RGBA"), "PNG"), "png", 1),
        ("webp_rgb", encode(img, "WEBP", quality=80), "webp", 1),
        ("gif_palette", encode(img.convert("P"), "GIF"), "gif", 1),
    ]
    rows = []
    for label, data, fmt, orientation in variants:
        opened = Image.open(io.BytesIO(data))
        rows.append(
            {"id": f"{name}/{label}", "image": data, "format": fmt, "mode": opened.mode}
            | {"width": opened.width, "height": opened.height, "orientation": orientation}
        )
    table = pa.Table.from_pylist(rows)
    return table.set_column(1, "image", table.column("image").cast(pa.large_binary()))


def to_batch(table: pa.Table) -> pa.RecordBatch:
    """The whole table as one record batch (what an operator receives)."""
    return table.combine_chunks().to_batches()[0]


def write_laion_parquet(table: pa.Table, path: str, row_group_rows: int = 16) -> str:
    """Write ``table`` as LAION-style Parquet: adds ``url`` and ``caption`` columns; images stored uncompressed."""
    ids = table.column("id").to_pylist() if "id" in table.column_names else []
    if "url" not in table.column_names:
        table = table.append_column("url", pa.array([f"https://images.example/{i}.jpg" for i in ids]))
    if "caption" not in table.column_names:
        table = table.append_column("caption", pa.array([f"a photo: {i.replace('/', ' ')}" for i in ids]))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    codecs = {c: ("none" if c == "image" else "zstd") for c in table.column_names}
    pq.write_table(table, path, row_group_size=row_group_rows, compression=codecs)
    return path


def write_image_folder(table: pa.Table, root: str) -> list[str]:
    """Write each row's image to ``root/<id>.<ext>`` (extension from the bytes, ``jpg`` when unknown)."""
    paths = []
    for row in table.select(["id", "image"]).to_pylist():
        path = os.path.join(root, f"{row['id']}.{sniff_extension(row['image'])}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(row["image"])
        paths.append(path)
    return paths


def write_webdataset(table: pa.Table, out_dir: str, samples_per_tar: int = 32, prefix: str = "shard") -> list[str]:
    """Write WebDataset tars ``<prefix>-00000.tar`` ...: per row ``<id>.<ext>``, ``<id>.txt`` (caption or id) and
    ``<id>.json`` (the row's other columns), members of a sample adjacent as WebDataset requires."""
    os.makedirs(out_dir, exist_ok=True)
    rows = table.to_pylist()
    paths = []
    for k, lo in enumerate(range(0, len(rows), samples_per_tar)):
        path = os.path.join(out_dir, f"{prefix}-{k:05d}.tar")
        with tarfile.open(path, "w") as tar:
            for row in rows[lo : lo + samples_per_tar]:
                meta = {c: v for c, v in row.items() if c not in ("id", "image", "caption")}
                caption = row.get("caption") or row["id"].replace("/", " ")
                add_member(tar, f"{row['id']}.{sniff_extension(row['image'])}", row["image"])
                add_member(tar, f"{row['id']}.txt", caption.encode())
                add_member(tar, f"{row['id']}.json", json.dumps(meta).encode())
        paths.append(path)
    return paths


def add_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def sniff_extension(data: bytes) -> str:
    return next((ext for magic, ext in _EXT if data.startswith(magic)), "jpg")


def _negative_candidates(originals: Sequence[str]) -> list[tuple[str, str, Any]]:
    """``(source, label, image)``: photos not used as originals, then tiles of about 256 pixels of the big ones."""
    out = [(name, "photo", photo(name)) for name in NEGATIVE_PHOTOS if name not in originals]
    for name in TILE_SOURCES:
        img = photo(name)
        w, h = img.size
        nx, ny = max(2, w // 256), max(2, h // 256)
        for r in range(ny):
            for c in range(nx):
                tile = img.crop((c * w // nx, r * h // ny, (c + 1) * w // nx, (r + 1) * h // ny))
                if np.asarray(tile.convert("L"), np.float32).std() >= 20:  # flat tiles all look alike
                    out.append((name, f"tile_r{r}c{c}", tile))
    return out


def _hashes(img: Any) -> np.ndarray:
    """pHash (imagehash's definition) of the image, of its central 70 % and of its mirror image, as 64-element
    bit vectors: a negative must be far from every earlier image in all three (two tiles of a symmetric
    photograph can be each other's mirror image, which is a near-duplicate too)."""
    from PIL import ImageOps

    w, h = img.size
    centre = img.crop((round(w * 0.15), round(h * 0.15), round(w * 0.85), round(h * 0.85)))
    return np.stack([_phash_bits(img), _phash_bits(centre), _phash_bits(ImageOps.mirror(img))])


def _phash_bits(img: Any) -> np.ndarray:
    from PIL import Image
    from scipy.fft import dct

    grey = np.asarray(img.convert("L").resize((32, 32), Image.Resampling.LANCZOS), np.float64)
    low = dct(dct(grey, axis=0), axis=1)[:8, :8]
    return (low > np.median(low)).ravel()


def _min_distance(a: np.ndarray, b: np.ndarray) -> int:
    return int(min((x != y).sum() for x in a for y in b))


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([r["id"] for r in rows], pa.string()),
            "image": pa.array([r["image"] for r in rows], pa.large_binary()),
            "group": pa.array([r["group"] for r in rows], pa.int32()),
            "source": pa.array([r["source"] for r in rows], pa.string()),
            "transform": pa.array([r["transform"] for r in rows], pa.string()),
        }
    )


def missing_extra() -> str | None:
    """The pip line that installs what this module needs, when something is missing (else None)."""
    import importlib.util

    missing = [
        pip for mod, pip in (("PIL", "Pillow"), ("skimage", "scikit-image")) if not importlib.util.find_spec(mod)
    ]
    return f"needs {' and '.join(missing)}: pip install 'mdf-image[testdata]'" if missing else None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mdf_image.testdata", description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="folder to write into")
    parser.add_argument("--formats", default="laion,folder,webdataset", help="comma list: laion, folder, webdataset")
    parser.add_argument("--no-bad", action="store_true", help="leave out the bad inputs")
    args = parser.parse_args(argv)
    if (problem := missing_extra()) is not None:
        parser.exit(2, f"error: python -m mdf_image.testdata {problem}\n")
    table = example_set(bad=not args.no_bad)
    formats = set(args.formats.split(","))
    written = []
    if "laion" in formats:
        written.append(write_laion_parquet(table, os.path.join(args.out_dir, "laion", "photos-00000.parquet")))
    if "folder" in formats:
        written.append(f"{len(write_image_folder(table, os.path.join(args.out_dir, 'folder')))} files in folder/")
    if "webdataset" in formats:
        written += write_webdataset(table, os.path.join(args.out_dir, "webdataset"))
    n_bad = table.num_rows - table.column("expected_reason").null_count
    print(f"{table.num_rows} images ({n_bad} bad) -> {args.out_dir}")
    print("\n".join(written))


if __name__ == "__main__":
    main()
