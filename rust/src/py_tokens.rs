//! Binding of the tokenizer kernel (`tokens.rs`): `TextTokenizer(path)` loads a `tokenizer.json` once
//! (the Python side keeps one per file per process, shared by its threads); `encode` turns a string
//! column into `list<uint32>` ids and their counts without the GIL, on the kernel pool. Contract:
//! `_native.pyi`.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, LargeListArray, ListArray, UInt32Array};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::columns::BytesColumn;
use crate::error::KernelError;
use crate::py_arrow::{export, import_chunks, run};
use crate::tokens::{EncodeOptions, Encoded, LongDocuments, TextTokenizer as Kernel};

/// A Hugging Face tokenizer (`tokenizer.json`), loaded once.
#[pyclass(frozen, module = "mdf_kernels._native", name = "TextTokenizer")]
pub struct TextTokenizer {
    inner: Arc<Kernel>,
}

#[pymethods]
impl TextTokenizer {
    #[new]
    #[pyo3(signature = (path, fast=true))]
    fn new(py: Python<'_>, path: &str, fast: bool) -> PyResult<Self> {
        let path = path.to_owned();
        let inner = run(py, "TextTokenizer", move || Kernel::from_file(&path, fast))?;
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// Tokens in the vocabulary, added tokens included.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    /// True when texts are encoded by the kernel's byte-level BPE path (same ids, less work), not the crate's.
    #[getter]
    fn fast(&self) -> bool {
        self.inner.is_fast()
    }

    /// One more than the largest id the tokenizer can give.
    #[getter]
    fn id_bound(&self) -> u64 {
        self.inner.id_bound()
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// encode(texts, add_special_tokens=True, bos=None, eos=None, max_tokens=None, split=False)
    ///     -> (pyarrow.ListArray, pyarrow.Int64Array, dict[str, int])
    ///
    /// Every text's ids as tokenizers' encode_batch gives them, framed and cut. See _native.pyi.
    #[pyo3(signature = (texts, add_special_tokens=true, bos=None, eos=None, max_tokens=None, split=false))]
    #[allow(clippy::too_many_arguments)]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        add_special_tokens: bool,
        bos: Option<u32>,
        eos: Option<u32>,
        max_tokens: Option<usize>,
        split: bool,
    ) -> PyResult<(Py<PyAny>, Py<PyAny>, Bound<'py, PyDict>)> {
        const K: &str = "TextTokenizer.encode";
        let opts = EncodeOptions {
            add_special_tokens,
            bos,
            eos,
            max_tokens,
            long: if split {
                LongDocuments::Split
            } else {
                LongDocuments::Truncate
            },
        };
        opts.check()
            .map_err(|e| PyValueError::new_err(format!("{K}: {}", e.message())))?;
        let chunks = import_chunks(texts, K, "texts")?;
        let model = Arc::clone(&self.inner);
        let (tokens, counts, encoded) = run(py, K, move || {
            let col = BytesColumn::from_chunks(&chunks, false)?;
            let mut encoded = model.encode_column(&col, &opts)?;
            let counts: ArrayRef = Arc::new(Int64Array::from_iter_values(
                encoded.offsets.windows(2).map(|w| w[1] - w[0]),
            ));
            let tokens = list_array(&mut encoded)?;
            Ok((tokens, counts, encoded))
        })?;
        let s = encoded.stats;
        let stats = PyDict::new(py);
        for (k, v) in [
            ("null", s.null),
            ("empty", s.empty),
            ("truncated", s.truncated),
            ("tokens_cut", s.tokens_cut),
            ("split", s.split),
            ("pieces", s.pieces),
            ("invalid_utf8", s.invalid_utf8_rows),
        ] {
            stats.set_item(k, v)?;
        }
        Ok((export(py, K, tokens)?, export(py, K, counts)?, stats))
    }
}

/// `list<uint32>` over the encoded values (`large_list` past 2^31 ids in one batch), no copy.
fn list_array(encoded: &mut Encoded) -> Result<ArrayRef, KernelError> {
    let values = Arc::new(UInt32Array::new(
        ScalarBuffer::from(std::mem::take(&mut encoded.values)),
        None,
    ));
    let field = Arc::new(Field::new_list_field(DataType::UInt32, true));
    let offsets = std::mem::take(&mut encoded.offsets);
    let last = offsets.last().copied().unwrap_or(0);
    if let Ok(last) = i32::try_from(last) {
        let small: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
        debug_assert_eq!(small.last().copied().unwrap_or(0), last);
        let offsets = OffsetBuffer::new(ScalarBuffer::from(small));
        return Ok(Arc::new(ListArray::try_new(field, offsets, values, None)?));
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    Ok(Arc::new(LargeListArray::try_new(
        field, offsets, values, None,
    )?))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TextTokenizer>()
}
