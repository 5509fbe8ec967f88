"""Decoding to RGB pixels for stages that hand images to a model (Pillow; the per-image loop is unavoidable there).

The refusal rules match the native kernels' so a row gets the same reason whichever stage rejects it: only
JPEG, PNG, WebP and GIF are read (``unsupported_format`` otherwise), ``empty`` for an empty blob,
``too_many_pixels`` from the header before any pixel is decoded, ``decode_error: ...`` for broken data.
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import pyarrow as pa

FORMATS = ["JPEG", "PNG", "WEBP", "GIF"]


def decode_rgb(blobs: pa.Array, max_pixels: int, min_side: int | None = None) -> tuple[list[Any], list[str | None]]:
    """``(images, reasons)``: a PIL RGB image or ``None`` per row, and why the row is ``None``.

    With ``min_side``, JPEGs are decoded at the smallest DCT scale (1/2, 1/4, 1/8) that keeps both sides at
    least that many pixels: a model that sees 224 pixels does not need a 4000-pixel decode.
    """
    from PIL import Image

    images: list[Any] = []
    reasons: list[str | None] = []
    for blob in blobs.to_pylist():
        img, reason = None, None
        if blob is None:
            reason = "null_image"
        elif not blob:
            reason = "empty"
        else:
            img, reason = _decode_one(Image, blob, max_pixels, min_side)
        images.append(img)
        reasons.append(reason)
    return images, reasons


def _decode_one(image_mod: Any, blob: bytes, max_pixels: int, min_side: int | None) -> tuple[Any, str | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", image_mod.DecompressionBombWarning)
            img = image_mod.open(io.BytesIO(blob), formats=FORMATS)
            if img.width * img.height > max_pixels:
                return None, "too_many_pixels"
            if min_side:
                img.draft("RGB", (min_side, min_side))
            return img.convert("RGB"), None
    except image_mod.UnidentifiedImageError:
        return None, "unsupported_format"
    except image_mod.DecompressionBombError:
        return None, "too_many_pixels"
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        return None, f"decode_error: {exc}"
