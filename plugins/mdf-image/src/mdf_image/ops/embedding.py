"""``image_embedding_refiner``: L2-normalised image embeddings from a CLIP-style encoder in a local folder.

The model is loaded once per worker in :meth:`setup` from ``model_path`` only (``local_files_only``: a run never
reaches the network), with the folder's own image processor, so resizing, cropping and normalisation are the
ones the model was trained with. ``preprocess: kernels`` decodes and resizes in the native thumbnails kernel
instead (all cores, GIL released; the whole image squeezed to the model's square input, no centre crop), which
frees the Python thread for the model; on 150-1400 pixel JPEGs it is not faster than Pillow's reduced-scale
JPEG decode yet (measured: 1.4 s vs 0.7 s for 400 images on 2 cores), so ``processor`` stays the default.

``device: auto`` uses a GPU only when this worker was given one: on Ray that means the stage asked for
``resources: {gpu: ...}`` (Ray hands out the device), inline it means CUDA is visible. A recipe with ``gpu: 0``
therefore runs the same stage on CPU, in float32.
"""

from __future__ import annotations

import os
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from pydantic import Field, model_validator

from mdf import InputFile, OperatorError, Params, Refiner, as_numpy, with_columns
from mdf_image.ops.decode import decode_rgb
from mdf_image.ops.native import image_column, kernel
from mdf_image.ops.reasons import append_reasons

_CLIP_TYPES = ("clip", "clip_vision_model")


class ImageEmbeddingRefiner(Refiner):
    """Add an L2-normalised embedding (fixed-size list of float32) from a local CLIP-style image encoder."""

    name = "image_embedding_refiner"
    reads = {"column": "binary"}
    writes = {"output_column": "list"}
    requires = dict.fromkeys(("torch", "transformers", "PIL"), "mdf-image[embeddings]")
    cost_class = "embedding"
    modality = "image"

    class Params(Params):
        model_path: InputFile = Field(
            description="local folder with the model (save_pretrained) and its image processor"
        )
        column: str = Field("image", description="binary column holding the encoded image")
        output_column: str = Field("embedding", description="column the embeddings are written to")
        device: Literal["auto", "cpu", "cuda"] = Field(
            "auto", description="auto = the GPU this worker was given (Ray: the stage's gpu resource), else CPU"
        )
        dtype: Literal["auto", "float16", "bfloat16", "float32"] = Field(
            "auto", description="weights and activations; auto = float16 on CUDA, float32 on CPU"
        )
        batch_size: int = Field(64, ge=1, description="images per forward pass")
        preprocess: Literal["processor", "kernels"] = Field(
            "processor",
            description="processor = Pillow + the model's image processor (exact); kernels = native decode and "
            "resize of the whole image to the model's square input (no centre crop)",
        )
        max_pixels: int | None = Field(
            None, gt=0, description="reject images with more pixels than this (none = mdf_kernels.MAX_PIXELS)"
        )

        @model_validator(mode="after")
        def _cpu_half(self) -> ImageEmbeddingRefiner.Params:
            if self.device == "cpu" and self.dtype == "float16":
                raise ValueError("float16 on CPU is unsupported by many kernels and slow; use dtype float32 or auto")
            return self

    def setup(self) -> None:
        p = self.params
        if not os.path.isdir(p.model_path):
            raise OperatorError(
                f"image_embedding_refiner: model_path {p.model_path!r} is not a folder on this machine "
                f"(cwd {os.getcwd()}); save the model there with save_pretrained() (runs never download)"
            )
        import torch

        self._torch = torch
        self.device = pick_device(p.device)
        if p.dtype == "auto":
            self.dtype = torch.float16 if self.device == "cuda" else torch.float32
        else:
            self.dtype = getattr(torch, p.dtype)
        self._processor, self._encode = load_encoder(p.model_path, self.device, self.dtype)
        self._max_pixels = p.max_pixels or _default_max_pixels()
        self._side = processor_side(self._processor)

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        blobs = image_column(batch, self.params.column, self.name)
        if self.params.preprocess == "kernels":
            images, good, reasons = self._thumbnails(blobs)
        else:
            decoded, reasons = decode_rgb(blobs, self._max_pixels, self._side)
            good = [i for i, img in enumerate(decoded) if img is not None]
            images = [decoded[i] for i in good]
        vectors = self._embed(images) if good else None
        column = embedding_column(vectors, good, batch.num_rows)
        batch = with_columns(batch, {self.params.output_column: column})
        if any(r is not None for r in reasons):
            batch = append_reasons(batch, pa.array(reasons, pa.string()))
        return batch

    def _thumbnails(self, blobs: pa.Array) -> tuple[np.ndarray, list[int], list[str | None]]:
        """``(uint8 [n, side, side, 3] of the decodable rows, their row numbers, reason per row)``; the reasons
        come from the header kernel, the one that names them (a thumbnail is only null or not)."""
        side = self._side or 224
        thumbs = kernel("image_thumbnails")(blobs, size=side, max_pixels=self._max_pixels)
        errors = kernel("image_metadata")(blobs, max_pixels=self._max_pixels).field("error").to_pylist()
        valid = np.asarray(as_numpy(thumbs.is_valid()), bool)
        nulls = blobs.is_null().to_pylist()
        reasons = [
            None if ok else ("null_image" if null else err or "decode_error: pixel data")
            for ok, null, err in zip(valid, nulls, errors, strict=True)
        ]
        pixels = thumbs.filter(pa.array(valid)).flatten().to_numpy().reshape(-1, side, side, 3)
        return pixels, np.flatnonzero(valid).tolist(), reasons

    def _pixels(self, chunk: Any) -> Any:
        """Model input for a chunk: the processor's output, or kernel thumbnails rescaled and normalised as the
        processor would (on the device, in float32)."""
        torch = self._torch
        if isinstance(chunk, list):
            return self._processor(images=chunk, return_tensors="pt")["pixel_values"].to(self.device)
        proc = self._processor
        x = torch.from_numpy(np.array(chunk)).to(self.device).permute(0, 3, 1, 2).float()  # a writable copy
        x = x * float(getattr(proc, "rescale_factor", 1 / 255))
        if getattr(proc, "do_normalize", True):
            mean = torch.tensor(proc.image_mean, device=self.device).view(1, -1, 1, 1)
            std = torch.tensor(proc.image_std, device=self.device).view(1, -1, 1, 1)
            x = (x - mean) / std
        return x

    def _embed(self, images: Any) -> np.ndarray:
        """Embeddings of decoded images, ``batch_size`` at a time, normalised in float32 whatever the dtype."""
        torch = self._torch
        out = []
        with torch.inference_mode():
            for lo in range(0, len(images), self.params.batch_size):
                pixels = self._pixels(images[lo : lo + self.params.batch_size])
                emb = self._encode(pixels.to(self.dtype)).float()
                emb = emb / emb.norm(dim=-1, keepdim=True).clamp_min(1e-12)
                out.append(emb.cpu().numpy())
        return np.concatenate(out)


def pick_device(requested: str) -> str:
    """``cpu``/``cuda`` as asked (cuda checked); for ``auto``, the GPU Ray assigned this worker, if any."""
    import torch

    if requested == "cuda" and not torch.cuda.is_available():
        raise OperatorError(
            "image_embedding_refiner: device 'cuda' but torch sees no CUDA device here; use device auto or cpu, "
            "or give the stage a GPU (resources: {gpu: 0.5})"
        )
    if requested != "auto":
        return requested
    try:
        import ray

        if ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None:
            # Ray may leave every GPU visible to an actor that asked for none: trust the assignment instead
            return "cuda" if ray.get_gpu_ids() and torch.cuda.is_available() else "cpu"
    except ImportError:
        pass
    return "cuda" if torch.cuda.is_available() else "cpu"


def load_encoder(path: str, device: str, dtype: Any) -> tuple[Any, Any]:
    """``(image processor, encode(pixel_values) -> embeddings)`` for the model saved in ``path``.

    CLIP checkpoints (full or vision-only) load as ``CLIPVisionModelWithProjection`` and give the projected
    ``image_embeds`` that CLIP's text tower is aligned with; other models (SigLIP, ...) load with ``AutoModel``
    and give ``get_image_features`` where they have it, else the pooled output.
    """
    from transformers import AutoConfig, AutoImageProcessor, AutoModel, CLIPVisionModelWithProjection

    kwargs = {"local_files_only": True}
    processor = AutoImageProcessor.from_pretrained(path, **kwargs)
    config = AutoConfig.from_pretrained(path, **kwargs)
    if config.model_type in _CLIP_TYPES:
        model = CLIPVisionModelWithProjection.from_pretrained(path, dtype=dtype, **kwargs)

        def encode(pixels: Any) -> Any:
            return model(pixel_values=pixels).image_embeds

    else:
        model = AutoModel.from_pretrained(path, dtype=dtype, **kwargs)

        def encode(pixels: Any) -> Any:
            if hasattr(model, "get_image_features"):
                return model.get_image_features(pixel_values=pixels)
            return model(pixel_values=pixels).pooler_output

    model.to(device).eval()
    return processor, encode


def processor_side(processor: Any) -> int | None:
    """The largest side the processor resizes or crops to: decoding below it would lose detail the model sees."""
    sides = []
    for attr in ("size", "crop_size"):
        spec = getattr(processor, attr, None)
        for key in ("shortest_edge", "height", "width"):
            value = spec.get(key) if isinstance(spec, dict) else getattr(spec, key, None)
            if isinstance(value, int):
                sides.append(value)
    return max(sides) if sides else None


def embedding_column(vectors: np.ndarray | None, rows: list[int], n: int) -> pa.FixedSizeListArray:
    """A ``fixed_size_list<float32>`` of ``n`` rows: ``vectors[k]`` at ``rows[k]``, null elsewhere."""
    if vectors is None:  # nothing decoded: the width is unknown, and every row is rejected anyway
        return pa.nulls(n, pa.list_(pa.float32(), 1))
    dim = vectors.shape[1]
    full = np.zeros((n, dim), np.float32)
    full[rows] = vectors
    mask = np.ones(n, bool)
    mask[rows] = False
    return pa.FixedSizeListArray.from_arrays(pa.array(full.ravel()), dim, mask=pa.array(mask))


def _default_max_pixels() -> int:
    try:
        import mdf_kernels

        return int(mdf_kernels.MAX_PIXELS)
    except (ImportError, AttributeError):
        return 178_956_970  # Pillow's own decompression-bomb limit
