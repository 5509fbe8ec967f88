//! Binding of [`crate::merge`]: sorted runs in as the chunks of two pyarrow arrays, without copying.

use arrow_array::{UInt32Array, UInt64Array};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use pyo3::prelude::*;

use crate::arrays::u64_array;
use crate::error::{KResult, KernelError};
use crate::merge::{first_unsorted, merge_runs};
use crate::py_arrow::{export, import_chunks, run};

/// merge_sorted_runs(keys, values) -> (pyarrow.UInt64Array, pyarrow.UInt64Array)
///
/// Every key once, sorted, with the value of its first occurrence. See _native.pyi.
#[pyfunction]
pub fn merge_sorted_runs(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    const K: &str = "merge_sorted_runs";
    let key_chunks = import_chunks(keys, K, "keys")?;
    let value_chunks = import_chunks(values, K, "values")?;
    let (merged_keys, merged_values) = run(py, K, move || {
        let lengths = |c: &[ArrayData]| c.iter().map(ArrayData::len).collect::<Vec<_>>();
        if lengths(&key_chunks) != lengths(&value_chunks) {
            return Err(KernelError::value(
                "keys and values must have chunks of the same lengths (one chunk a run)",
            ));
        }
        let key_arrays = key_chunks
            .iter()
            .map(|d| uint64_chunk(d, "keys"))
            .collect::<KResult<Vec<_>>>()?;
        let value_arrays = value_chunks
            .iter()
            .map(|d| widened(d, "values"))
            .collect::<KResult<Vec<_>>>()?;
        let runs: Vec<&[u64]> = key_arrays.iter().map(|a| a.values().as_ref()).collect();
        let vals: Vec<&[u64]> = value_arrays.iter().map(Values::as_slice).collect();
        if let Some(i) = first_unsorted(&runs) {
            return Err(KernelError::value(format!(
                "keys chunk {i} is not sorted ascending; sort each run first"
            )));
        }
        let (k, v) = merge_runs(&runs, &vals, rayon::current_num_threads());
        Ok((u64_array(k, None), u64_array(v, None)))
    })?;
    Ok((export(py, K, merged_keys)?, export(py, K, merged_values)?))
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
