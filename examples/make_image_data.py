"""A synthetic image Parquet set for ``examples/images.yaml``: ``python examples/make_image_data.py [DIR] [ROWS]``.

Each row has an ``id``, a ``caption`` and an ``image`` column of 50-300 KB of bytes that begin like a JPEG
(``FF D8 FF E0``) and end like one (``FF D9``): enough for ``mdf plan`` to recognise images by their magic bytes
and weigh them, without Pillow. Row groups of 64 rows, as image sets use, so reading never holds much more than
a batch. Images are random bytes, so the image column is stored uncompressed.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def image_table(rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(50_000, 300_001, size=rows)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    data = rng.integers(0, 256, size=int(offsets[-1]), dtype=np.uint8)
    for k, byte in enumerate(b"\xff\xd8\xff\xe0"):
        data[offsets[:-1] + k] = byte
    data[offsets[1:] - 2], data[offsets[1:] - 1] = 0xFF, 0xD9
    images = pa.Array.from_buffers(pa.large_binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    words = np.array(["a", "cat", "dog", "on", "the", "red", "sofa", "beach", "at", "sunset", "photo", "of"])
    captions = [" ".join(words[rng.integers(0, len(words), size=int(n))]) for n in rng.integers(3, 15, size=rows)]
    return pa.table({"id": [f"img-{i:07d}" for i in range(rows)], "caption": captions, "image": images})


def write_images(out_dir: str, rows: int, files: int = 2, seed: int = 0) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    table = image_table(rows, seed)
    per = -(-rows // files)
    paths = []
    for k in range(files):
        path = os.path.join(out_dir, f"img-{k:05d}.parquet")
        codecs = {"id": "zstd", "caption": "zstd", "image": "none"}
        pq.write_table(table.slice(k * per, per), path, row_group_size=64, compression=codecs)
        paths.append(path)
    return paths


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "mdf-demo/images"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000
    print("\n".join(write_images(out, n)))
