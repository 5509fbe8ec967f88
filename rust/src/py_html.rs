//! Python binding of the HTML extractor (`html_extract`): argument checks, then `html::extract_column`
//! without the GIL on the kernel pool. Contract: `_native.pyi`.

use std::time::Duration;

use pyo3::prelude::*;

use crate::columns::BytesColumn;
use crate::html::{self, Options, DEFAULT_BUDGET_MS};
use crate::py_arrow::{export, import_chunks, int_arg, run};

// The literal default of `time_budget_ms` below (a literal, so that `inspect.signature` shows it).
const _: () = assert!(DEFAULT_BUDGET_MS == 2000);

fn time_budget_arg(o: &Bound<'_, PyAny>) -> PyResult<u64> {
    int_arg(o, "html_extract", "time_budget_ms", 1, 1 << 40)
}

/// html_extract(pages, charsets=None, with_metadata=False, time_budget_ms=2000) -> pyarrow.StructArray
///
/// Main text and title of every page (plus head metadata on request). See _native.pyi.
#[pyfunction]
#[pyo3(signature = (pages, charsets=None, with_metadata=false, time_budget_ms=2000))]
fn html_extract(
    py: Python<'_>,
    pages: &Bound<'_, PyAny>,
    charsets: Option<&Bound<'_, PyAny>>,
    with_metadata: bool,
    #[pyo3(from_py_with = time_budget_arg)] time_budget_ms: u64,
) -> PyResult<Py<PyAny>> {
    const K: &str = "html_extract";
    let opts = Options {
        time_budget: Some(Duration::from_millis(time_budget_ms)),
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(html_extract, m)?)?;
    Ok(())
}
