//! Python bindings of the image kernels (`image_metadata`, `image_quality`, `image_hashes`,
//! `mih_block_keys`, `image_thumbnails`): argument checks, then the column kernels of
//! `image::batch` without the GIL. Contracts: `_native.pyi`.

use pyo3::prelude::*;

use crate::arrays::u64_keys;
use crate::columns::BytesColumn;
use crate::image::{batch, mih, MAX_PIXELS};
use crate::py_arrow::{export, import_chunks, int_arg, run};

/// `max_pixels=None` means Pillow's limit, [`MAX_PIXELS`].
fn max_pixels_arg(o: Option<&Bound<'_, PyAny>>, kernel: &str) -> PyResult<u64> {
    match o {
        Some(o) if !o.is_none() => int_arg(o, kernel, "max_pixels", 1, u64::MAX),
        _ => Ok(MAX_PIXELS),
    }
}

/// A side in pixels, 1..=32768.
fn side_arg(o: &Bound<'_, PyAny>, kernel: &str, name: &str) -> PyResult<usize> {
    int_arg(o, kernel, name, 1, 1 << 15).map(|v| v as usize)
}

// Argument extractors (`from_py_with`): see `py_arrow::int_arg`.
fn max_side_arg(o: &Bound<'_, PyAny>) -> PyResult<usize> {
    side_arg(o, "image_quality", "max_side")
}

fn size_arg(o: &Bound<'_, PyAny>) -> PyResult<usize> {
    side_arg(o, "image_thumbnails", "size")
}

/// image_metadata(blobs, max_pixels=None) -> pyarrow.StructArray
///
/// Format, size, Pillow mode, EXIF orientation and byte count from the header only. See _native.pyi.
#[pyfunction]
#[pyo3(signature = (blobs, max_pixels=None))]
fn image_metadata(
    py: Python<'_>,
    blobs: &Bound<'_, PyAny>,
    max_pixels: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "image_metadata";
    let max_pixels = max_pixels_arg(max_pixels, K)?;
    let chunks = import_chunks(blobs, K, "blobs")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(batch::metadata_column(&col, max_pixels))
    })?;
    export(py, K, out)
}

/// image_quality(blobs, max_side=512, max_pixels=None) -> pyarrow.StructArray
///
/// Sharpness, entropy, brightness, contrast, colourfulness and JPEG blockiness. See _native.pyi.
#[pyfunction]
#[pyo3(signature = (blobs, max_side=512, max_pixels=None))]
fn image_quality(
    py: Python<'_>,
    blobs: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = max_side_arg)] max_side: usize,
    max_pixels: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "image_quality";
    let max_pixels = max_pixels_arg(max_pixels, K)?;
    let chunks = import_chunks(blobs, K, "blobs")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(batch::quality_column(&col, max_side, max_pixels))
    })?;
    export(py, K, out)
}

/// image_hashes(blobs, max_pixels=None) -> pyarrow.StructArray
///
/// pHash and dHash as imagehash defines them, plus the centre-crop pHash. See _native.pyi.
#[pyfunction]
#[pyo3(signature = (blobs, max_pixels=None))]
fn image_hashes(
    py: Python<'_>,
    blobs: &Bound<'_, PyAny>,
    max_pixels: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "image_hashes";
    let max_pixels = max_pixels_arg(max_pixels, K)?;
    let chunks = import_chunks(blobs, K, "blobs")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(batch::hashes_column(&col, max_pixels))
    })?;
    export(py, K, out)
}

/// image_thumbnails(blobs, size=224, max_pixels=None) -> pyarrow.FixedSizeListArray
///
/// Whole-image RGB thumbnails, size x size, Pillow BILINEAR. See _native.pyi.
#[pyfunction]
#[pyo3(signature = (blobs, size=224, max_pixels=None))]
fn image_thumbnails(
    py: Python<'_>,
    blobs: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = size_arg)] size: usize,
    max_pixels: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "image_thumbnails";
    let max_pixels = max_pixels_arg(max_pixels, K)?;
    let chunks = import_chunks(blobs, K, "blobs")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(batch::thumbnails_column(&col, size, max_pixels))
    })?;
    export(py, K, out)
}

/// mih_block_keys(hashes, max_hamming) -> pyarrow.UInt64Array
///
/// max_hamming + 1 multi-index-hashing block keys per 64-bit hash, row-major. See _native.pyi.
#[pyfunction]
fn mih_block_keys(
    py: Python<'_>,
    hashes: &Bound<'_, PyAny>,
    max_hamming: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "mih_block_keys";
    let max_hamming = int_arg(max_hamming, K, "max_hamming", 0, u64::MAX)?;
    let chunks = import_chunks(hashes, K, "hashes")?;
    let out = run(py, K, move || {
        let m = mih::check_max_hamming(max_hamming)?;
        let (keys, nulls) = u64_keys(&chunks)?;
        Ok(batch::mih_keys_column(&keys, nulls.as_ref(), m))
    })?;
    export(py, K, out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(image_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(image_quality, m)?)?;
    m.add_function(wrap_pyfunction!(image_hashes, m)?)?;
    m.add_function(wrap_pyfunction!(image_thumbnails, m)?)?;
    m.add_function(wrap_pyfunction!(mih_block_keys, m)?)?;
    m.add("MAX_PIXELS", MAX_PIXELS)?;
    Ok(())
}
