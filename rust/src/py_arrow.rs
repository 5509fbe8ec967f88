//! Binding glue: Arrow arrays in and out through the Arrow PyCapsule interface, kernel error
//! mapping, and the "release the GIL, catch panics, run on the kernel pool" wrapper.

use std::panic::{catch_unwind, AssertUnwindSafe};

use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ArrayRef;
use arrow_data::ArrayData;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyString};

use crate::error::{KResult, KernelError};
use crate::pool;

/// Turn a kernel error into the matching Python exception, prefixed with the kernel name.
pub fn py_err(kernel: &str, e: KernelError) -> PyErr {
    let msg = format!("{kernel}: {}", e.message());
    match e {
        KernelError::Type(_) => PyTypeError::new_err(msg),
        KernelError::Value(_) => PyValueError::new_err(msg),
        KernelError::Internal(_) => PyRuntimeError::new_err(msg),
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// Run `f` without the GIL on the kernel thread pool; a panic becomes a `RuntimeError`.
pub fn run<T: Send>(
    py: Python<'_>,
    kernel: &str,
    f: impl FnOnce() -> KResult<T> + Send,
) -> PyResult<T> {
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| pool::install(f))).unwrap_or_else(|p| {
            Err(KernelError::Internal(format!(
                "internal error (please report it): {}",
                panic_message(p.as_ref())
            )))
        })
    })
    .map_err(|e| py_err(kernel, e))
}

fn import_one(obj: &Bound<'_, PyAny>) -> PyResult<ArrayData> {
    let (schema_cap, array_cap): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) =
        obj.call_method0("__arrow_c_array__")?.extract()?;
    let schema_ptr = schema_cap.pointer_checked(Some(c"arrow_schema"))?;
    let array_ptr = array_cap.pointer_checked(Some(c"arrow_array"))?;
    // SAFETY: the capsules follow the Arrow PyCapsule protocol: `arrow_schema` points to a
    // live FFI_ArrowSchema we only borrow, `arrow_array` to an FFI_ArrowArray we move out of
    // (leaving a released struct behind, so the capsule destructor does nothing).
    let data = unsafe {
        let schema = &*schema_ptr.as_ptr().cast::<FFI_ArrowSchema>();
        let array = FFI_ArrowArray::from_raw(array_ptr.as_ptr().cast::<FFI_ArrowArray>());
        from_ffi(array, schema)
    };
    data.map_err(|e| PyValueError::new_err(format!("cannot import Arrow array: {e}")))
}

/// Chunks of a pyarrow `Array`/`ChunkedArray` (or any object exporting `__arrow_c_array__`).
pub fn import_chunks(obj: &Bound<'_, PyAny>, kernel: &str, arg: &str) -> PyResult<Vec<ArrayData>> {
    let wrap = |e: PyErr| {
        PyTypeError::new_err(format!(
            "{kernel}: cannot read {arg} as an Arrow array: {e}"
        ))
    };
    if obj.hasattr("__arrow_c_array__")? {
        return Ok(vec![import_one(obj).map_err(wrap)?]);
    }
    if obj.hasattr("chunks")? && obj.hasattr("combine_chunks")? {
        let chunks = obj.getattr("chunks")?;
        let mut out = Vec::new();
        for c in chunks.try_iter()? {
            out.push(import_one(&c?).map_err(wrap)?);
        }
        if out.is_empty() {
            // A chunked array without chunks still carries its type.
            out.push(import_one(&obj.call_method0("combine_chunks")?).map_err(wrap)?);
        }
        return Ok(out);
    }
    Err(PyTypeError::new_err(format!(
        "{kernel}: {arg} must be a pyarrow Array or ChunkedArray, got {}; wrap Python data with pyarrow.array(...)",
        obj.get_type().name()?
    )))
}

/// Hand `array` to pyarrow without copying (`pyarrow.Array._import_from_c_capsule`).
pub fn export(py: Python<'_>, kernel: &str, array: ArrayRef) -> PyResult<Py<PyAny>> {
    let (ffi_array, ffi_schema) = to_ffi(&array.to_data()).map_err(|e| py_err(kernel, e.into()))?;
    let schema = PyCapsule::new_with_value(py, ffi_schema, c"arrow_schema")?;
    let array = PyCapsule::new_with_value(py, ffi_array, c"arrow_array")?;
    let cls = py.import("pyarrow")?.getattr("Array")?;
    Ok(cls
        .call_method1("_import_from_c_capsule", (schema, array))?
        .unbind())
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// An optional `str` argument; anything else is a `TypeError` naming kernel and argument.
pub fn opt_str_arg(
    obj: Option<&Bound<'_, PyAny>>,
    kernel: &str,
    arg: &str,
) -> PyResult<Option<String>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => o.extract::<String>().map(Some).map_err(|_| {
            PyTypeError::new_err(format!(
                "{kernel}: {arg} must be None or a str, got {}",
                type_name(o)
            ))
        }),
    }
}

/// A `str` argument; anything else is a `TypeError` naming kernel and argument.
pub fn str_arg<'a>(obj: &'a Bound<'_, PyAny>, kernel: &str, arg: &str) -> PyResult<&'a str> {
    obj.cast::<PyString>()
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "{kernel}: {arg} must be a str, got {}",
                type_name(obj)
            ))
        })?
        .to_str()
}

/// An integer argument within `[min, max]`: `TypeError` for a non-int, `ValueError` out of range.
///
/// An argument with a default is bound through a one-line extractor calling this (or [`float_arg`],
/// [`str_arg`]) with `#[pyo3(from_py_with = ...)]`: the default then stays a literal in
/// `#[pyo3(signature = ...)]`, where `inspect.signature` (and so mypy's stubtest) reads it, and a bad
/// value still gets a message that starts with the kernel's name.
pub fn int_arg(
    obj: &Bound<'_, PyAny>,
    kernel: &str,
    arg: &str,
    min: u64,
    max: u64,
) -> PyResult<u64> {
    if obj.is_instance_of::<pyo3::types::PyBool>() || !obj.is_instance_of::<pyo3::types::PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{kernel}: {arg} must be an int, got {}",
            type_name(obj)
        )));
    }
    let v: i128 = obj
        .extract()
        .map_err(|_| PyValueError::new_err(format!("{kernel}: {arg}={obj} is out of range")))?;
    if v < i128::from(min) || v > i128::from(max) {
        return Err(PyValueError::new_err(format!(
            "{kernel}: {arg} must be in {min}..={max}, got {v}"
        )));
    }
    Ok(v as u64)
}

/// A float argument (ints accepted).
pub fn float_arg(obj: &Bound<'_, PyAny>, kernel: &str, arg: &str) -> PyResult<f64> {
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{kernel}: {arg} must be a float, got bool"
        )));
    }
    obj.extract::<f64>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{kernel}: {arg} must be a float, got {}",
            type_name(obj)
        ))
    })
}
