//! Python classes: `DomainSet` (immutable block list), `KeySet` / `KeySet128` (insert-only sets
//! of hash keys with snapshot support) and `SortedKeys` (lookups in a sorted key array, in place).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use std::sync::Arc;

use arrow_array::{Array, Int64Array, UInt64Array};
use arrow_schema::DataType;

use crate::arrays::{bool_array, fixed_binary_rows, u64_keys};
use crate::columns::BytesColumn;
use crate::domains;
use crate::error::KernelError;
use crate::keyset::KeyTable;
use crate::py_arrow::{export, import_chunks, int_arg, py_err, run};
use crate::sorted_keys::Directory;

/// Set of blocked domains; see `domain_blocked`.
#[pyclass(frozen, module = "mdf_kernels._native")]
pub struct DomainSet {
    pub inner: domains::DomainSet,
}

#[pymethods]
impl DomainSet {
    #[new]
    fn new(py: Python<'_>, domains: &Bound<'_, PyAny>) -> PyResult<Self> {
        const K: &str = "DomainSet";
        if domains.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(format!(
                "{K}: domains must be an iterable of str, got a single str; wrap it in a list"
            )));
        }
        if domains.hasattr("__arrow_c_array__")? || domains.hasattr("combine_chunks")? {
            let chunks = import_chunks(domains, K, "domains")?;
            let inner = run(py, K, move || {
                let col = BytesColumn::from_chunks(&chunks, false)?;
                let items = (0..col.len())
                    .filter_map(|i| col.get(i))
                    .map(String::from_utf8_lossy);
                Ok(domains::DomainSet::new(items))
            })?;
            return Ok(Self { inner });
        }
        let mut items = Vec::new();
        for d in domains.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "{K}: domains must be an iterable of str, got {}",
                domains.get_type()
            ))
        })? {
            let d = d?;
            let s: String = d.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{K}: domains must contain only str, got {} ({})",
                    d.get_type(),
                    d
                ))
            })?;
            items.push(s);
        }
        Ok(Self {
            inner: domains::DomainSet::new(items),
        })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Exact membership of the canonical (lowercased, trailing dot stripped) domain.
    fn __contains__(&self, domain: &str) -> bool {
        self.inner.contains_exact(&domains::canonical_host(domain))
    }

    fn __repr__(&self) -> String {
        format!("DomainSet(<{} domains>)", self.inner.len())
    }
}

macro_rules! keyset_class {
    ($name:ident, $key:ty, $pyname:literal, $read:expr) => {
        /// Insert-only set of hash keys with snapshots; see _native.pyi.
        #[pyclass(module = "mdf_kernels._native")]
        pub struct $name {
            table: KeyTable<$key>,
        }

        #[pymethods]
        impl $name {
            #[new]
            #[pyo3(signature = (capacity=None))]
            fn new(capacity: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
                let n = match capacity {
                    Some(c) if !c.is_none() => {
                        int_arg(c, $pyname, "capacity", 0, 1 << 40)? as usize
                    }
                    _ => 0,
                };
                Ok(Self {
                    table: KeyTable::with_capacity(n),
                })
            }

            fn insert_new(
                &mut self,
                py: Python<'_>,
                keys: &Bound<'_, PyAny>,
            ) -> PyResult<Py<PyAny>> {
                const K: &str = concat!($pyname, ".insert_new");
                let chunks = import_chunks(keys, K, "keys")?;
                let table = &mut self.table;
                let out = run(py, K, move || {
                    let (keys, nulls) = $read(&chunks)?;
                    let fresh = match &nulls {
                        Some(n) => table.insert_many(&keys, |i| n.is_valid(i)),
                        None => table.insert_many(&keys, |_| true),
                    };
                    Ok(bool_array(fresh, nulls))
                })?;
                export(py, K, out)
            }

            fn contains(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                const K: &str = concat!($pyname, ".contains");
                let chunks = import_chunks(keys, K, "keys")?;
                let table = &self.table;
                let out = run(py, K, move || {
                    let (keys, nulls) = $read(&chunks)?;
                    Ok(bool_array(table.contains_many(&keys), nulls))
                })?;
                export(py, K, out)
            }

            fn __len__(&self) -> usize {
                self.table.len()
            }

            fn memory_bytes(&self) -> usize {
                self.table.memory_bytes()
            }

            fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
                PyBytes::new(py, &self.table.to_bytes())
            }

            #[staticmethod]
            fn from_bytes(data: &[u8]) -> PyResult<Self> {
                KeyTable::from_bytes(data)
                    .map(|table| Self { table })
                    .map_err(|e| py_err(concat!($pyname, ".from_bytes"), e))
            }

            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
                let ctor = slf.get_type().getattr("from_bytes")?;
                Ok((ctor, (slf.borrow().to_bytes(slf.py()),)))
            }

            fn __repr__(&self) -> String {
                format!(concat!($pyname, "(<{} keys>)"), self.table.len())
            }
        }
    };
}

fn u128_keys(
    chunks: &[arrow_data::ArrayData],
) -> crate::error::KResult<(Vec<u128>, Option<arrow_buffer::NullBuffer>)> {
    let (rows, nulls) = fixed_binary_rows(chunks, 16)?;
    let keys = rows
        .chunks_exact(16)
        .map(|c| u128::from_be_bytes(c.try_into().expect("16 bytes")))
        .collect();
    Ok((keys, nulls))
}

keyset_class!(KeySet, u64, "KeySet", u64_keys);
keyset_class!(KeySet128, u128, "KeySet128", u128_keys);

/// Lookups in a sorted uint64 array without copying it (a memory-mapped index file stays the page
/// cache's); see _native.pyi and [`crate::sorted_keys`].
#[pyclass(frozen, module = "mdf_kernels._native")]
pub struct SortedKeys {
    keys: UInt64Array,
    directory: Directory,
}

#[pymethods]
impl SortedKeys {
    #[new]
    fn new(py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Self> {
        const K: &str = "SortedKeys";
        let chunks = import_chunks(keys, K, "keys")?;
        run(py, K, move || {
            let [data] = chunks.as_slice() else {
                return Err(KernelError::value(format!(
                    "keys must be one array, got {} chunks; combine them first",
                    chunks.len()
                )));
            };
            if data.data_type() != &DataType::UInt64 {
                return Err(KernelError::type_err(format!(
                    "keys must be uint64, got {}",
                    data.data_type()
                )));
            }
            let keys = UInt64Array::from(data.clone());
            if keys.null_count() > 0 {
                return Err(KernelError::value("keys must not hold nulls"));
            }
            let directory = Directory::new(keys.values()).map_err(|at| {
                KernelError::value(format!(
                    "keys must be sorted ascending; key {at} is smaller than the one before it"
                ))
            })?;
            Ok(Self { keys, directory })
        })
    }

    /// Per query, whether the keys hold it (a null query: null).
    fn contains(&self, py: Python<'_>, queries: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        const K: &str = "SortedKeys.contains";
        let chunks = import_chunks(queries, K, "queries")?;
        let out = run(py, K, || {
            let (queries, nulls) = u64_keys(&chunks)?;
            let found = self
                .directory
                .find_all(self.keys.values(), &queries, |at| at.is_some());
            Ok(bool_array(found, nulls))
        })?;
        export(py, K, out)
    }

    /// Per query, the position of the first key equal to it, or -1 (a null query: -1).
    fn locate(&self, py: Python<'_>, queries: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        const K: &str = "SortedKeys.locate";
        let chunks = import_chunks(queries, K, "queries")?;
        let out = run(py, K, || {
            let (queries, nulls) = u64_keys(&chunks)?;
            let mut at = self.directory.find_all(self.keys.values(), &queries, |at| {
                at.map_or(-1, |i| i as i64)
            });
            if let Some(n) = nulls {
                at.iter_mut()
                    .enumerate()
                    .filter(|(i, _)| n.is_null(*i))
                    .for_each(|(_, a)| *a = -1);
            }
            Ok(Arc::new(Int64Array::from(at)) as arrow_array::ArrayRef)
        })?;
        export(py, K, out)
    }

    fn __len__(&self) -> usize {
        self.keys.len()
    }

    /// The directory's bytes (the keys are the caller's array, not copied).
    fn memory_bytes(&self) -> usize {
        self.directory.memory_bytes()
    }

    fn __repr__(&self) -> String {
        format!("SortedKeys(<{} keys>)", self.keys.len())
    }
}
