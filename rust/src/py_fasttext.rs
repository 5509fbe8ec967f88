//! Binding of the fastText kernels (`fasttext/`): `FastTextModel(path)` loads a supervised model once (the
//! Python side keeps one per file per process, shared by its threads); `predict` scores a string column
//! without the GIL on the kernel pool. Contract: `_native.pyi`.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float32Array, UInt32Array};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::columns::BytesColumn;
use crate::error::KernelError;
use crate::fasttext::Model;
use crate::py_arrow::{export, import_chunks, run};

/// A supervised fastText model (`.bin` or quantized `.ftz`), memory-mapped.
#[pyclass(frozen, module = "mdf_kernels._native", name = "FastTextModel")]
pub struct FastTextModel {
    inner: Arc<Model>,
}

#[pymethods]
impl FastTextModel {
    #[new]
    fn new(py: Python<'_>, path: &str) -> PyResult<Self> {
        let path = path.to_owned();
        let inner = run(py, "FastTextModel", move || {
            Model::load(&path).map_err(|e| KernelError::value(format!("{path:?}: {}", e.message())))
        })?;
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// Label names as in the file (with `__label__`), in the model's label order.
    #[getter]
    fn labels(&self) -> Vec<String> {
        self.inner.labels()
    }

    /// The training loss: "softmax", "hs", "ova" or "ns".
    #[getter]
    fn loss(&self) -> &'static str {
        self.inner.loss
    }

    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim
    }

    /// predict(lines, labels=None, whole_text=False) -> (list[pyarrow.FloatArray], pyarrow.UInt32Array)
    ///
    /// fastText's predict(line, k=-1, threshold=0.0) of every line. See _native.pyi.
    #[pyo3(signature = (lines, labels=None, whole_text=false))]
    fn predict(
        &self,
        py: Python<'_>,
        lines: &Bound<'_, PyAny>,
        labels: Option<Vec<usize>>,
        whole_text: bool,
    ) -> PyResult<(Vec<Py<PyAny>>, Py<PyAny>)> {
        const K: &str = "FastTextModel.predict";
        let n = self.inner.nlabels();
        let labels = labels.unwrap_or_else(|| (0..n).collect());
        if let Some(bad) = labels.iter().find(|&&l| l >= n) {
            return Err(PyValueError::new_err(format!(
                "{K}: label index {bad} out of range; the model has {n} labels"
            )));
        }
        let chunks = import_chunks(lines, K, "lines")?;
        let model = Arc::clone(&self.inner);
        let width = labels.len();
        let (scores, top) = run(py, K, move || {
            let col = BytesColumn::from_chunks(&chunks, true)?;
            let rows = model.predict_column(&col, &labels, whole_text);
            let scores: Vec<ArrayRef> = (0..width)
                .map(|j| {
                    let vals = rows.iter().map(|r| r.as_ref().map(|(p, _)| p[j]));
                    Arc::new(Float32Array::from_iter(vals)) as ArrayRef
                })
                .collect();
            let top = rows.iter().map(|r| r.as_ref().map(|(_, t)| *t));
            Ok((scores, Arc::new(UInt32Array::from_iter(top)) as ArrayRef))
        })?;
        let scores = scores
            .into_iter()
            .map(|a| export(py, K, a))
            .collect::<PyResult<Vec<_>>>()?;
        Ok((scores, export(py, K, top)?))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FastTextModel>()
}
