//! Python class `NearIndex` (see `near.rs`): the per-bucket state of Hamming near-duplicate search.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::arrays::{u64_array, u64_keys};
use crate::error::KernelError;
use crate::near;
use crate::py_arrow::{export, import_chunks, int_arg, py_err, run};

/// Multi-index-hashing state: block key -> (hash, position) entries; see _native.pyi.
#[pyclass(module = "mdf_kernels._native")]
#[derive(Default)]
pub struct NearIndex {
    inner: near::NearIndex,
}

fn stride_arg(o: &Bound<'_, PyAny>) -> PyResult<u64> {
    int_arg(o, "NearIndex.query_insert", "stride", 1, u64::MAX)
}

#[pymethods]
impl NearIndex {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// query_insert(keys, hashes, positions, max_distance, stride=1) -> pyarrow.UInt64Array (null = no match)
    #[pyo3(signature = (keys, hashes, positions, max_distance, stride=1))]
    fn query_insert(
        &mut self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        hashes: &Bound<'_, PyAny>,
        positions: &Bound<'_, PyAny>,
        max_distance: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = stride_arg)] stride: u64,
    ) -> PyResult<Py<PyAny>> {
        const K: &str = "NearIndex.query_insert";
        let d = int_arg(max_distance, K, "max_distance", 0, 64)? as u32;
        let (k, h, p) = (
            import_chunks(keys, K, "keys")?,
            import_chunks(hashes, K, "hashes")?,
            import_chunks(positions, K, "positions")?,
        );
        let index = &mut self.inner;
        let out = run(py, K, move || {
            let (k, kn) = u64_keys(&k)?;
            let (h, hn) = u64_keys(&h)?;
            let (p, pn) = u64_keys(&p)?;
            if kn.is_some() || hn.is_some() || pn.is_some() {
                return Err(KernelError::value(
                    "keys, hashes and positions must not contain nulls".to_owned(),
                ));
            }
            let best = index.query_insert(&k, &h, &p, d, stride)?;
            let nulls = crate::columns::nulls_from_valid(best.iter().map(|&b| b != near::NO_MATCH));
            Ok(u64_array(
                best.into_iter()
                    .map(|b| if b == near::NO_MATCH { 0 } else { b })
                    .collect(),
                nulls,
            ))
        })?;
        export(py, K, out)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        near::NearIndex::from_bytes(data)
            .map(|inner| Self { inner })
            .map_err(|e| py_err("NearIndex.from_bytes", e))
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let ctor = slf.get_type().getattr("from_bytes")?;
        Ok((ctor, (slf.borrow().to_bytes(slf.py()),)))
    }

    fn __repr__(&self) -> String {
        format!("NearIndex(<{} entries>)", self.inner.len())
    }
}
