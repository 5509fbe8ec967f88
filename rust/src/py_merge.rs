//! Bindings of [`crate::merge`] and [`crate::sort_pairs`]: keys and values in as the chunks of two
//! pyarrow arrays, without copying.

use std::sync::Arc;

use arrow_array::{ArrayRef, UInt32Array, UInt64Array};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use pyo3::prelude::*;

use crate::arrays::u64_array;
use crate::error::{KResult, KernelError};
use crate::merge::{first_unsorted, merge_runs};
use crate::py_arrow::{export, import_chunks, run};
use crate::sort_pairs::sort_unique;

/// merge_sorted_runs(keys, values) -> (pyarrow.UInt64Array, pyarrow.UInt64Array)
///
/// Every key once, sorted, with the value of its first occurrence. See _native.pyi.
#[pyfunction]
pub fn merge_sorted_runs(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    pairs_kernel(
        py,
        "merge_sorted_runs",
        keys,
        values,
        |runs, value_chunks| {
            if let Some(i) = first_unsorted(runs) {
                return Err(KernelError::value(format!(
                    "keys chunk {i} is not sorted ascending; sort each run first"
                )));
            }
            on_wide_values(value_chunks, |vals| {
                merge_runs(runs, vals, rayon::current_num_threads())
            })
        },
    )
}

/// sort_unique_pairs(keys, values) -> (pyarrow.UInt64Array, pyarrow.UInt64Array | pyarrow.UInt32Array)
///
/// Every key once, sorted, with the value of its first occurrence; chunks in any order. See
/// _native.pyi.
#[pyfunction]
pub fn sort_unique_pairs(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    pairs_kernel(
        py,
        "sort_unique_pairs",
        keys,
        values,
        |runs, value_chunks| {
            let narrow = |d: &ArrayData| d.data_type() == &DataType::UInt32;
            if !value_chunks.is_empty() && value_chunks.iter().all(narrow) {
                // uint32 values stay uint32: no widened copy in, half the values' bytes out
                let arrays = value_chunks
                    .iter()
                    .map(|d| no_nulls(d, "values").map(|()| UInt32Array::from(d.clone())))
                    .collect::<KResult<Vec<_>>>()?;
                let vals: Vec<&[u32]> = arrays.iter().map(|a| a.values().as_ref()).collect();
                let (k, v) = sort_unique(runs, &vals);
                return Ok((
                    u64_array(k, None),
                    Arc::new(UInt32Array::from(v)) as ArrayRef,
                ));
            }
            on_wide_values(value_chunks, |vals| sort_unique(runs, vals))
        },
    )
}

/// Keys imported as uint64 chunks and values as chunks of the same lengths (nulls refused), given
/// to `f` without the GIL; its two arrays exported.
fn pairs_kernel(
    py: Python<'_>,
    kernel: &'static str,
    keys: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    f: impl FnOnce(&[&[u64]], &[ArrayData]) -> KResult<(ArrayRef, ArrayRef)> + Send,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let key_chunks = import_chunks(keys, kernel, "keys")?;
    let value_chunks = import_chunks(values, kernel, "values")?;
    let (out_keys, out_values) = run(py, kernel, move || {
        let lengths = |c: &[ArrayData]| c.iter().map(ArrayData::len).collect::<Vec<_>>();
        if lengths(&key_chunks) != lengths(&value_chunks) {
            return Err(KernelError::value(
                "keys and values must have chunks of the same lengths",
            ));
        }
        let key_arrays = key_chunks
            .iter()
            .map(|d| uint64_chunk(d, "keys"))
            .collect::<KResult<Vec<_>>>()?;
        let runs: Vec<&[u64]> = key_arrays.iter().map(|a| a.values().as_ref()).collect();
        f(&runs, &value_chunks)
    })?;
    Ok((
        export(py, kernel, out_keys)?,
        export(py, kernel, out_values)?,
    ))
}

/// `f` over the value chunks as `u64` slices (uint32 ones widened); its keys and values as
/// uint64 arrays.
fn on_wide_values(
    chunks: &[ArrayData],
    f: impl FnOnce(&[&[u64]]) -> (Vec<u64>, Vec<u64>),
) -> KResult<(ArrayRef, ArrayRef)> {
    let arrays = chunks
        .iter()
        .map(|d| widened(d, "values"))
        .collect::<KResult<Vec<_>>>()?;
    let vals: Vec<&[u64]> = arrays.iter().map(Values::as_slice).collect();
    let (k, v) = f(&vals);
    Ok((u64_array(k, None), u64_array(v, None)))
}

fn uint64_chunk(data: &ArrayData, what: &str) -> KResult<UInt64Array> {
    if data.data_type() != &DataType::UInt64 {
        return Err(KernelError::type_err(format!(
            "{what}: expected uint64 chunks, got {}",
            data.data_type()
        )));
    }
    no_nulls(data, what)?;
    Ok(UInt64Array::from(data.clone()))
}

fn no_nulls(data: &ArrayData, what: &str) -> KResult<()> {
    if data.null_count() > 0 {
        return Err(KernelError::value(format!("{what} contains nulls")));
    }
    Ok(())
}

/// A values chunk: uint64 as it is, uint32 widened (a copy, 4 bytes a value more).
enum Values {
    Wide(UInt64Array),
    Widened(Vec<u64>),
}

impl Values {
    fn as_slice(&self) -> &[u64] {
        match self {
            Values::Wide(a) => a.values(),
            Values::Widened(v) => v,
        }
    }
}

fn widened(data: &ArrayData, what: &str) -> KResult<Values> {
    if data.data_type() == &DataType::UInt32 {
        no_nulls(data, what)?;
        let array = UInt32Array::from(data.clone());
        return Ok(Values::Widened(
            array.values().iter().map(|&v| u64::from(v)).collect(),
        ));
    }
    uint64_chunk(data, what).map(Values::Wide)
}
