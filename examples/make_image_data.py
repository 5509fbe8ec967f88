"""A synthetic image Parquet set for ``examples/images.yaml``: ``python examples/make_image_data.py [DIR] [ROWS]``.

The generator lives in ``mdf.demo_data`` (the tests use it too); see ``image_table`` for what the rows hold.
"""

from __future__ import annotations

import sys

from mdf.demo_data import write_image_dataset

if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "mdf-demo/images"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000
    print("\n".join(write_image_dataset(out, n)))
