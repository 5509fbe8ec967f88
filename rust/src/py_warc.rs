//! Binding of the WARC reader kernel (`warc/`): `WarcScanner` is fed the file's bytes by the Python reader
//! (which reads them through `mdf.storage`, so S3 and https work as local files do) and hands back Arrow
//! batches and the damage, if any. The GIL is released while a chunk is inflated and parsed.

use std::collections::HashSet;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::ArrayRef;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::py_arrow::{export, run};
use crate::warc::{Config, Scanner};

/// WarcScanner(gzip, base, wanted, mime_exact, mime_prefixes, batch_rows, max_batch_bytes, max_record_bytes)
///
/// Splits a WARC stream into records and Arrow batches. See _native.pyi.
#[pyclass(module = "mdf_kernels._native")]
pub struct WarcScanner {
    inner: Scanner,
}

#[pymethods]
impl WarcScanner {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (gzip, base, wanted, mime_exact, mime_prefixes, batch_rows, max_batch_bytes, max_record_bytes))]
    fn new(
        gzip: bool,
        base: u64,
        wanted: u32,
        mime_exact: Option<Vec<String>>,
        mime_prefixes: Vec<String>,
        batch_rows: usize,
        max_batch_bytes: usize,
        max_record_bytes: usize,
    ) -> PyResult<Self> {
        if batch_rows == 0 || max_batch_bytes == 0 || max_record_bytes == 0 {
            return Err(PyValueError::new_err(
                "WarcScanner: batch_rows, max_batch_bytes and max_record_bytes must be positive",
            ));
        }
        let cfg = Config {
            gzip,
            base,
            wanted,
            mime_exact: mime_exact.map(|v| v.into_iter().collect::<HashSet<_>>()),
            mime_prefixes,
            batch_rows,
            max_batch_bytes,
            max_record_bytes,
        };
        Ok(WarcScanner {
            inner: Scanner::new(cfg),
        })
    }

    /// feed(data, last) -> list[pyarrow.StructArray]: the batches completed by these bytes.
    fn feed(
        &mut self,
        py: Python<'_>,
        data: &Bound<'_, PyBytes>,
        last: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let bytes = data.as_bytes();
        scan(py, "WarcScanner.feed", &mut self.inner, |s| {
            s.feed(bytes, last)
        })
    }

    /// feed_file(path, offset, size, last) -> (list[pyarrow.StructArray], int): like `feed` with `size` bytes
    /// of the local file `path` from `offset`, read here without the GIL; also returns how many were read.
    fn feed_file(
        &mut self,
        py: Python<'_>,
        path: PathBuf,
        offset: u64,
        size: usize,
        last: bool,
    ) -> PyResult<(Vec<Py<PyAny>>, usize)> {
        const K: &str = "WarcScanner.feed_file";
        let scanner = &mut self.inner;
        let read = py.detach(|| {
            catch_unwind(AssertUnwindSafe(|| -> std::io::Result<_> {
                let mut f = File::open(&path)?;
                f.seek(SeekFrom::Start(offset))?;
                let got = scanner.feed_read(&mut f, size, last)?;
                Ok((scanner.take_batches(), got))
            }))
        });
        let (batches, got) = match read {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return Err(PyOSError::new_err(format!("{K}: {}: {e}", path.display()))),
            Err(_) => {
                return Err(PyRuntimeError::new_err(format!(
                    "{K}: internal error (please report it)"
                )))
            }
        };
        let out = batches
            .into_iter()
            .map(|b| export(py, K, Arc::new(b) as ArrayRef))
            .collect::<PyResult<_>>()?;
        Ok((out, got))
    }

    /// map_file(path, start, stop) -> bool: map bytes `start..stop` of the local file `path` for `advance`;
    /// False (nothing mapped) when it is not on a local disk filesystem: then use `feed_file`.
    fn map_file(&mut self, py: Python<'_>, path: PathBuf, start: u64, stop: u64) -> PyResult<bool> {
        const K: &str = "WarcScanner.map_file";
        let scanner = &mut self.inner;
        py.detach(|| File::open(&path).and_then(|f| scanner.map_file(&f, start, stop)))
            .map_err(|e| PyOSError::new_err(format!("{K}: {}: {e}", path.display())))
    }

    /// advance(n) -> list[pyarrow.StructArray]: scan the next `n` bytes of the mapped range; the batches
    /// completed by them. The last bytes of the range end the input.
    fn advance(&mut self, py: Python<'_>, n: usize) -> PyResult<Vec<Py<PyAny>>> {
        scan(py, "WarcScanner.advance", &mut self.inner, |s| s.advance(n))
    }

    /// True once the scan ended (the end of the input, or damage); later input is ignored.
    #[getter]
    fn done(&self) -> bool {
        self.inner.done()
    }

    /// [(file offset, message)] of each damaged part of the input, in file order (complete once `done`).
    #[getter]
    fn damages(&self) -> Vec<(u64, String)> {
        self.inner.damages().to_vec()
    }
}

/// Run `step` on the scanner without the GIL and export the batches it completed.
fn scan(
    py: Python<'_>,
    k: &str,
    scanner: &mut Scanner,
    step: impl FnOnce(&mut Scanner) + Send,
) -> PyResult<Vec<Py<PyAny>>> {
    let batches = run(py, k, move || {
        step(scanner);
        Ok(scanner.take_batches())
    })?;
    batches
        .into_iter()
        .map(|b| export(py, k, Arc::new(b) as ArrayRef))
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<WarcScanner>()
}
