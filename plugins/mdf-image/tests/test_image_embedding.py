"""image_embedding_refiner on CPU with a tiny CLIP saved to disk, checked against the model run by hand."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest

from mdf.errors import OperatorError
from mdf.metrics import REASON
from mdf.testing import check_operator_contract, run_operator
from mdf_image import testdata
from mdf_image.ops.embedding import ImageEmbeddingRefiner, pick_device
from mdf_image.testdata import to_batch

pytestmark = pytest.mark.embeddings  # run by `nox -s embeddings`, the one session that installs torch

torch = pytest.importorskip("torch", reason="image_embedding_refiner needs torch: pip install 'mdf-image[embeddings]'")
transformers = pytest.importorskip("transformers", reason="needs transformers: pip install 'mdf-image[embeddings]'")


def reference(model_path: str, blobs: list[bytes]) -> np.ndarray:
    """Embeddings computed directly: Pillow full decode, the saved processor, the saved model, L2 norm."""
    from PIL import Image

    model = transformers.CLIPVisionModelWithProjection.from_pretrained(model_path).eval()
    processor = transformers.AutoImageProcessor.from_pretrained(model_path)
    images = [Image.open(io.BytesIO(b)).convert("RGB") for b in blobs]
    with torch.inference_mode():
        emb = model(pixel_values=processor(images=images, return_tensors="pt")["pixel_values"]).image_embeds
    emb = emb / emb.norm(dim=-1, keepdim=True)
    return emb.numpy()


def vectors(batch: pa.RecordBatch, column: str = "embedding") -> np.ndarray:
    col = batch.column(column)
    return col.values.to_numpy(zero_copy_only=False).reshape(len(col), col.type.list_size)


def test_embeddings_equal_the_model_run_by_hand_on_lossless_images(tiny_clip):
    names = ("astronaut", "coffee", "camera", "chelsea", "rocket")
    blobs = [testdata.encode(testdata.photo(n), "PNG") for n in names]
    batch = pa.RecordBatch.from_pydict({"id": list(names), "image": pa.array(blobs, pa.large_binary())})
    kept, rejected = run_operator(ImageEmbeddingRefiner(model_path=tiny_clip, device="cpu", batch_size=2), batch)
    assert rejected is None
    assert kept.schema.field("embedding").type == pa.list_(pa.float32(), 16)
    got = vectors(kept)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(got, reference(tiny_clip, blobs), atol=1e-5)


def test_reduced_jpeg_decode_stays_close_to_full_decode(tiny_clip, photos):
    t = photos.filter(pa.compute.equal(photos["transform"], "original"))
    kept, _ = run_operator(ImageEmbeddingRefiner(model_path=tiny_clip), to_batch(t))
    cos = (vectors(kept) * reference(tiny_clip, t.column("image").to_pylist())).sum(axis=1)
    assert cos.min() > 0.98, cos


def test_bad_inputs_rejected_with_the_kernels_reasons(tiny_clip, bad):
    null = pa.table({"id": ["bad/null"], "image": pa.array([None], pa.large_binary()), "expected_reason": ["null"]})
    batch = to_batch(pa.concat_tables([bad, null]))
    kept, rejected = run_operator(ImageEmbeddingRefiner(model_path=tiny_clip), batch)
    assert kept.num_rows == 0
    got = dict(zip(rejected["id"].to_pylist(), rejected[REASON].to_pylist(), strict=True))
    for key, want in zip(batch["id"].to_pylist(), batch["expected_reason"].to_pylist(), strict=True):
        assert got[key].startswith(f"image_embedding_refiner:{want}"), (key, got[key])


def test_mixed_batch_keeps_good_rows_in_order_and_contract(tiny_clip, mixed):
    op = ImageEmbeddingRefiner(model_path=tiny_clip, batch_size=16, output_column="clip")
    kept, rejected = run_operator(op, to_batch(mixed))
    assert kept.column("id").to_pylist() == [
        i for i, r in zip(mixed["id"].to_pylist(), mixed["expected_reason"].to_pylist(), strict=True) if r is None
    ]
    assert kept.column("clip").null_count == 0 and rejected.num_rows == 6
    check_operator_contract(ImageEmbeddingRefiner(model_path=tiny_clip), to_batch(mixed), id_column="id")


def test_device_choice_and_missing_model(tmp_path):
    assert pick_device("cpu") == "cpu"
    if not torch.cuda.is_available():
        assert pick_device("auto") == "cpu"
        with pytest.raises(OperatorError, match="no CUDA device"):
            pick_device("cuda")
    with pytest.raises(OperatorError, match="is not a folder"):
        run_operator(ImageEmbeddingRefiner(model_path=str(tmp_path / "nope")), pa.record_batch({"image": [b""]}))
    with pytest.raises(ValueError, match="float16 on CPU"):
        ImageEmbeddingRefiner(model_path=str(tmp_path), device="cpu", dtype="float16")


def test_kernel_preprocessing_matches_a_squeezed_pillow_input(tiny_clip):
    """``preprocess: kernels`` feeds the whole image resized to the model's square input, normalised like the
    processor: the same as Pillow's bilinear resize to 32 x 32 given to the model by hand, up to resampling."""
    from PIL import Image

    names = ("astronaut", "coffee", "camera", "rocket")
    blobs = [testdata.encode(testdata.photo(n), "PNG") for n in names]
    batch = pa.RecordBatch.from_pydict({"id": list(names), "image": pa.array(blobs, pa.large_binary())})
    kept, _ = run_operator(ImageEmbeddingRefiner(model_path=tiny_clip, preprocess="kernels"), batch)
    model = transformers.CLIPVisionModelWithProjection.from_pretrained(tiny_clip).eval()
    proc = transformers.AutoImageProcessor.from_pretrained(tiny_clip)
    squeezed = [
        np.asarray(Image.open(io.BytesIO(b)).convert("RGB").resize((32, 32), Image.Resampling.BILINEAR)) for b in blobs
    ]
    x = torch.from_numpy(np.stack(squeezed)).permute(0, 3, 1, 2).float() / 255
    x = (x - torch.tensor(proc.image_mean).view(1, 3, 1, 1)) / torch.tensor(proc.image_std).view(1, 3, 1, 1)
    with torch.inference_mode():
        ref = model(pixel_values=x).image_embeds
    ref = (ref / ref.norm(dim=-1, keepdim=True)).numpy()
    cos = (vectors(kept) * ref).sum(axis=1)
    assert cos.min() > 0.99, cos
    exact = vectors(run_operator(ImageEmbeddingRefiner(model_path=tiny_clip), batch)[0])
    assert not np.allclose(exact, vectors(kept), atol=1e-3)  # a centre crop is not a squeeze: the options differ


def test_kernel_preprocessing_rejects_bad_inputs_with_reasons(tiny_clip, bad):
    kept, rejected = run_operator(ImageEmbeddingRefiner(model_path=tiny_clip, preprocess="kernels"), to_batch(bad))
    assert kept.num_rows == 0
    got = dict(zip(rejected["id"].to_pylist(), rejected[REASON].to_pylist(), strict=True))
    for key, want in zip(bad["id"].to_pylist(), bad["expected_reason"].to_pylist(), strict=True):
        if key == "bad/truncated_jpeg":  # the header is fine: the reason says only that decoding failed
            want = "decode_error"
        assert got[key].startswith(f"image_embedding_refiner:{want}"), (key, got[key])
