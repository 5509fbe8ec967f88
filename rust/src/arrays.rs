//! Readers for fixed-width Arrow inputs (integers, keys, signatures) and builders for the
//! arrays the kernels return.

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, FixedSizeBinaryArray, FixedSizeListArray, StringArray,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field};

use crate::columns::concat_nulls;
use crate::error::{KResult, KernelError};

/// An integer column (int32/int64/uint32/uint64), read as `u64`.
pub struct IntColumn {
    pub values: Vec<u64>,
    pub null_count: usize,
    pub nulls: Option<NullBuffer>,
}

pub const INT_TYPES: &str = "int32, int64, uint32 or uint64";

impl IntColumn {
    /// Read integer chunks; negative values are an error (`what` names the argument).
    pub fn from_chunks(chunks: &[ArrayData], what: &str) -> KResult<Self> {
        let total = chunks.iter().map(|c| c.len()).sum();
        let mut values = Vec::with_capacity(total);
        let mut parts = Vec::with_capacity(chunks.len());
        for data in chunks {
            let arr = arrow_array::make_array(data.clone());
            macro_rules! read {
                ($t:ty, $conv:expr) => {{
                    let a = arr
                        .as_any()
                        .downcast_ref::<$t>()
                        .expect("type checked above");
                    for (i, v) in a.values().iter().enumerate() {
                        if a.is_valid(i) {
                            values.push($conv(*v)?);
                        } else {
                            values.push(0);
                        }
                    }
                }};
            }
            let neg = |v: i64| {
                u64::try_from(v)
                    .map_err(|_| KernelError::value(format!("{what} contains negative value {v}")))
            };
            match data.data_type() {
                DataType::UInt64 => read!(UInt64Array, |v: u64| KResult::Ok(v)),
                DataType::UInt32 => read!(UInt32Array, |v: u32| KResult::Ok(u64::from(v))),
                DataType::Int64 => read!(arrow_array::Int64Array, neg),
                DataType::Int32 => read!(arrow_array::Int32Array, |v: i32| neg(i64::from(v))),
                other => {
                    return Err(KernelError::type_err(format!(
                        "{what}: expected an {INT_TYPES} array, got {other}"
                    )))
                }
            }
            parts.push((data.len(), arr.logical_nulls()));
        }
        let nulls = concat_nulls(parts.iter().map(|(l, n)| (*l, n.as_ref())), total);
        let null_count = nulls.as_ref().map_or(0, |n| n.null_count());
        Ok(Self {
            values,
            null_count,
            nulls,
        })
    }
}

/// A uint64 or int64 column as raw 64-bit keys (int64 reinterpreted bit for bit).
pub fn u64_keys(chunks: &[ArrayData]) -> KResult<(Vec<u64>, Option<NullBuffer>)> {
    let mut keys = Vec::with_capacity(chunks.iter().map(|c| c.len()).sum());
    let mut parts = Vec::with_capacity(chunks.len());
    for data in chunks {
        match data.data_type() {
            DataType::UInt64 => keys.extend_from_slice(UInt64Array::from(data.clone()).values()),
            DataType::Int64 => keys.extend(
                arrow_array::Int64Array::from(data.clone())
                    .values()
                    .iter()
                    .map(|&v| v as u64),
            ),
            other => {
                return Err(KernelError::type_err(format!(
                    "expected a uint64 or int64 array of keys (e.g. from hash64), got {other}"
                )))
            }
        }
        parts.push((data.len(), data.nulls().cloned()));
    }
    let nulls = concat_nulls(parts.iter().map(|(l, n)| (*l, n.as_ref())), keys.len());
    Ok((keys, nulls))
}

/// A `fixed_size_binary(width)` column copied into contiguous rows.
pub fn fixed_binary_rows(
    chunks: &[ArrayData],
    width: i32,
) -> KResult<(Vec<u8>, Option<NullBuffer>)> {
    let mut rows = Vec::new();
    let mut parts = Vec::new();
    for data in chunks {
        if data.data_type() != &DataType::FixedSizeBinary(width) {
            return Err(KernelError::type_err(format!(
                "expected a fixed_size_binary[{width}] array, got {}",
                data.data_type()
            )));
        }
        let a = FixedSizeBinaryArray::from(data.clone());
        let w = width as usize;
        let start = a.offset() * w;
        rows.extend_from_slice(&a.value_data()[start..start + a.len() * w]);
        parts.push((a.len(), a.nulls().cloned()));
    }
    let total = rows.len() / width as usize;
    let nulls = concat_nulls(parts.iter().map(|(l, n)| (*l, n.as_ref())), total);
    Ok((rows, nulls))
}

/// A `fixed_size_list<uint32>[k]` column: `(k, values row-major, nulls)`.
pub fn u32_signatures(chunks: &[ArrayData]) -> KResult<(usize, Vec<u32>, Option<NullBuffer>)> {
    let mut width = None;
    let mut values: Vec<u32> = Vec::new();
    let mut parts = Vec::new();
    for data in chunks {
        let k = match data.data_type() {
            DataType::FixedSizeList(f, k) if f.data_type() == &DataType::UInt32 => *k as usize,
            other => {
                return Err(KernelError::type_err(format!(
                    "expected a fixed_size_list<uint32>[num_perm] array (as minhash returns), got {other}"
                )))
            }
        };
        if width.is_some_and(|w| w != k) {
            return Err(KernelError::type_err("chunks have different list sizes"));
        }
        width = Some(k);
        let a = FixedSizeListArray::from(data.clone());
        let child = a
            .values()
            .as_any()
            .downcast_ref::<UInt32Array>()
            .expect("type checked above");
        values.extend_from_slice(child.values());
        parts.push((a.len(), a.nulls().cloned()));
    }
    let k = width.unwrap_or(0);
    let total = parts.iter().map(|(l, _)| l).sum();
    let nulls = concat_nulls(parts.iter().map(|(l, n)| (*l, n.as_ref())), total);
    Ok((k, values, nulls))
}

pub fn u64_array(values: Vec<u64>, nulls: Option<NullBuffer>) -> ArrayRef {
    Arc::new(UInt64Array::new(values.into(), nulls))
}

pub fn u8_array(values: Vec<u8>) -> ArrayRef {
    Arc::new(UInt8Array::new(values.into(), None))
}

pub fn bool_array(values: Vec<bool>, nulls: Option<NullBuffer>) -> ArrayRef {
    Arc::new(BooleanArray::new(BooleanBuffer::from(values), nulls))
}

pub fn fixed_binary_array(width: i32, values: Vec<u8>, nulls: Option<NullBuffer>) -> ArrayRef {
    Arc::new(FixedSizeBinaryArray::new(
        width,
        Buffer::from_vec(values),
        nulls,
    ))
}

/// `fixed_size_list<item: uint32>[k]` (nullable item field, as `pa.list_(pa.uint32(), k)`).
pub fn u32_list_array(k: usize, values: Vec<u32>, nulls: Option<NullBuffer>) -> ArrayRef {
    let field = Arc::new(Field::new_list_field(DataType::UInt32, true));
    let child = Arc::new(UInt32Array::new(values.into(), None));
    Arc::new(FixedSizeListArray::new(field, k as i32, child, nulls))
}

/// String array from optional borrowed-or-owned strings.
pub fn string_array(values: &[Option<Cow<'_, str>>]) -> ArrayRef {
    let bytes: usize = values.iter().flatten().map(|s| s.len()).sum();
    let mut b = arrow_array::builder::StringBuilder::with_capacity(values.len(), bytes);
    for v in values {
        b.append_option(v.as_deref());
    }
    let a: StringArray = b.finish();
    Arc::new(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_column_rejects_negative() {
        let a = arrow_array::Int64Array::from(vec![1, -2]);
        assert!(matches!(
            IntColumn::from_chunks(&[a.to_data()], "left"),
            Err(KernelError::Value(_))
        ));
        let a = arrow_array::Int64Array::from(vec![Some(1), None]);
        let c = IntColumn::from_chunks(&[a.to_data()], "left").unwrap();
        assert_eq!((c.values, c.null_count), (vec![1, 0], 1));
    }
}
