//! Python binding of the HTML extractor (`html_extract`): argument checks, then `html::extract_column`
//! without the GIL on the kernel pool. Contract: `_native.pyi`.

use pyo3::prelude::*;

use crate::columns::BytesColumn;
use pyo3::exceptions::PyValueError;

use crate::html::content::features::FEATURES;
use crate::html::content::model::{self, Model};
use crate::html::{self, Favor, Options, DEFAULT_MAX_BYTES};
use crate::py_arrow::{export, import_chunks, int_arg, run};

// The literal default of `max_bytes` below (a literal, so that `inspect.signature` shows it).
const _: () = assert!(DEFAULT_MAX_BYTES == 67_108_864);

fn max_bytes_arg(o: &Bound<'_, PyAny>) -> PyResult<u64> {
    int_arg(o, "html_extract", "max_bytes", 1, 1 << 40)
}

/// A block model given as the text of a model file (`None`: none, Readability's rules alone).
fn model_arg(model: Option<&[u8]>) -> PyResult<Option<Model>> {
    let Some(text) = model else {
        return Ok(None);
    };
    let text = std::str::from_utf8(text).map_err(|_| {
        PyValueError::new_err("html_extract: model is not a text model file (not UTF-8)")
    })?;
    Model::parse(text)
        .map(Some)
        .map_err(|e| PyValueError::new_err(format!("html_extract: {e}")))
}

/// html_extract(pages, charsets=None, with_metadata=False, max_bytes=67108864, favor="balanced", model=None) -> pyarrow.StructArray
///
/// Main text and title of every page (plus head metadata on request). See _native.pyi.
#[pyfunction]
#[pyo3(signature = (pages, charsets=None, with_metadata=false, max_bytes=67_108_864, favor="balanced", model=None))]
#[allow(clippy::too_many_arguments)]
fn html_extract(
    py: Python<'_>,
    pages: &Bound<'_, PyAny>,
    charsets: Option<&Bound<'_, PyAny>>,
    with_metadata: bool,
    #[pyo3(from_py_with = max_bytes_arg)] max_bytes: u64,
    favor: &str,
    model: Option<&[u8]>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "html_extract";
    let model = model_arg(model)?;
    let favor = Favor::parse(favor).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{K}: favor='{favor}' is not a mode; use 'precision', 'balanced' or 'recall'"
        ))
    })?;
    let opts = Options {
        max_bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX),
        favor,
        model: model.as_ref(),
    };
    let pages = import_chunks(pages, K, "pages")?;
    let charsets = match charsets {
        Some(o) if !o.is_none() => Some(import_chunks(o, K, "charsets")?),
        _ => None,
    };
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&pages, true)?;
        let cs = charsets
            .map(|c| BytesColumn::from_chunks(&c, false))
            .transpose()?;
        let rows = html::extract_column(&col, cs.as_ref(), opts)?;
        Ok(html::to_struct(&rows, with_metadata))
    })?;
    export(py, K, out)
}

/// html_blocks(pages, charsets=None, max_bytes=67108864) -> pyarrow.StructArray
///
/// Every unit of every page with its text and block-model features (training data). See _native.pyi.
#[pyfunction]
#[pyo3(signature = (pages, charsets=None, max_bytes=67_108_864))]
fn html_blocks(
    py: Python<'_>,
    pages: &Bound<'_, PyAny>,
    charsets: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = max_bytes_arg)] max_bytes: u64,
) -> PyResult<Py<PyAny>> {
    const K: &str = "html_blocks";
    let pages = import_chunks(pages, K, "pages")?;
    let charsets = match charsets {
        Some(o) if !o.is_none() => Some(import_chunks(o, K, "charsets")?),
        _ => None,
    };
    let max_bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&pages, true)?;
        let cs = charsets
            .map(|c| BytesColumn::from_chunks(&c, false))
            .transpose()?;
        Ok(html::training::unit_table(&col, cs.as_ref(), max_bytes))
    })?;
    export(py, K, out)
}

/// html_block_model() -> bytes: the text of the block model shipped with the kernel (for `html_extract(model=)`).
#[pyfunction]
fn html_block_model() -> &'static [u8] {
    model::SHIPPED.as_bytes()
}

/// html_block_features() -> list[str]: the names of html_blocks' features, in order.
#[pyfunction]
fn html_block_features() -> Vec<&'static str> {
    FEATURES.to_vec()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(html_extract, m)?)?;
    m.add_function(wrap_pyfunction!(html_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(html_block_features, m)?)?;
    m.add_function(wrap_pyfunction!(html_block_model, m)?)?;
    Ok(())
}
