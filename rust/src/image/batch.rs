//! Column kernels: a binary column in, one Arrow array out, rows in parallel on the kernel
//! pool. Null rows give null struct rows; a bad row gives a valid struct row whose `error` is
//! set and whose other fields are null.

use std::sync::Arc;

use arrow_array::types::{Float64Type, UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{
    ArrayRef, FixedSizeListArray, PrimitiveArray, StringArray, StructArray, UInt8Array,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields};

use super::{meta, mih, par_rows, phash, quality, thumb, ImgResult};
use crate::columns::{nulls_from_valid, BytesColumn};

/// Rows of header-only work per rayon task (a row costs well under a microsecond).
const META_ROWS_PER_TASK: usize = 512;

type Row<T> = Option<ImgResult<T>>;

/// `f(row)` of the rows that decoded (null for null or bad rows).
fn field<T, V>(rows: &[Row<T>], f: impl Fn(&T) -> Option<V>) -> Vec<Option<V>> {
    rows.iter()
        .map(|r| r.as_ref().and_then(|r| r.as_ref().ok()).and_then(&f))
        .collect()
}

fn prim<P: arrow_array::ArrowPrimitiveType>(v: Vec<Option<P::Native>>) -> ArrayRef {
    Arc::new(v.into_iter().collect::<PrimitiveArray<P>>())
}

fn error_column<T>(rows: &[Row<T>]) -> ArrayRef {
    let errs: Vec<Option<String>> = rows
        .iter()
        .map(|r| {
            r.as_ref()
                .and_then(|r| r.as_ref().err())
                .map(ToString::to_string)
        })
        .collect();
    Arc::new(StringArray::from(errs))
}

fn struct_of<T>(rows: &[Row<T>], mut cols: Vec<(&str, ArrayRef)>) -> ArrayRef {
    cols.push(("error", error_column(rows)));
    let fields: Fields = cols
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let arrays = cols.into_iter().map(|(_, a)| a).collect();
    let nulls = nulls_from_valid(rows.iter().map(Option::is_some));
    Arc::new(StructArray::new(fields, arrays, nulls))
}

/// `struct<format, width, height, mode, orientation, num_bytes, error>`.
pub fn metadata_column(col: &BytesColumn, max_pixels: u64) -> ArrayRef {
    let rows = par_rows(col, META_ROWS_PER_TASK, |b| {
        meta::read(b, max_pixels).map(|m| (m, b.len() as u64))
    });
    let strings = |f: fn(&meta::Meta) -> &'static str| -> ArrayRef {
        Arc::new(StringArray::from(field(&rows, |(m, _)| Some(f(m)))))
    };
    struct_of(
        &rows,
        vec![
            ("format", strings(|m| m.format.name())),
            (
                "width",
                prim::<UInt32Type>(field(&rows, |(m, _)| Some(m.width))),
            ),
            (
                "height",
                prim::<UInt32Type>(field(&rows, |(m, _)| Some(m.height))),
            ),
            ("mode", strings(|m| m.mode)),
            (
                "orientation",
                prim::<UInt8Type>(field(&rows, |(m, _)| Some(m.orientation))),
            ),
            (
                "num_bytes",
                prim::<UInt64Type>(field(&rows, |(_, n)| Some(*n))),
            ),
        ],
    )
}

/// `struct<sharpness, entropy, brightness, contrast, colorfulness, blockiness, width, height, error>`.
pub fn quality_column(col: &BytesColumn, max_side: usize, max_pixels: u64) -> ArrayRef {
    let rows = par_rows(col, 1, |b| quality::quality(b, max_side, max_pixels));
    let f64s = |f: fn(&quality::Quality) -> f64| prim::<Float64Type>(field(&rows, |q| Some(f(q))));
    struct_of(
        &rows,
        vec![
            ("sharpness", f64s(|q| q.sharpness)),
            ("entropy", f64s(|q| q.entropy)),
            ("brightness", f64s(|q| q.brightness)),
            ("contrast", f64s(|q| q.contrast)),
            ("colorfulness", f64s(|q| q.colorfulness)),
            ("blockiness", f64s(|q| q.blockiness)),
            ("width", prim::<UInt32Type>(field(&rows, |q| Some(q.width)))),
            (
                "height",
                prim::<UInt32Type>(field(&rows, |q| Some(q.height))),
            ),
        ],
    )
}

/// `struct<phash, dhash, phash_crop, phash_flip, error>` (uint64 hashes).
pub fn hashes_column(col: &BytesColumn, max_pixels: u64) -> ArrayRef {
    let rows = par_rows(col, 1, |b| phash::hashes(b, max_pixels));
    let u64s = |f: fn(&phash::Hashes) -> u64| prim::<UInt64Type>(field(&rows, |h| Some(f(h))));
    struct_of(
        &rows,
        vec![
            ("phash", u64s(|h| h.phash)),
            ("dhash", u64s(|h| h.dhash)),
            ("phash_crop", u64s(|h| h.phash_crop)),
            ("phash_flip", u64s(|h| h.phash_flip)),
        ],
    )
}

/// `fixed_size_list<uint8>[size * size * 3]`; null for null and bad rows.
pub fn thumbnails_column(col: &BytesColumn, size: usize, max_pixels: u64) -> ArrayRef {
    let rows = par_rows(col, 1, |b| thumb::thumbnail(b, size, max_pixels));
    let width = size * size * 3;
    let mut values = Vec::with_capacity(rows.len() * width);
    for r in &rows {
        match r {
            Some(Ok(px)) => values.extend_from_slice(px),
            _ => values.resize(values.len() + width, 0),
        }
    }
    let nulls = nulls_from_valid(rows.iter().map(|r| matches!(r, Some(Ok(_)))));
    let item = Arc::new(Field::new_list_field(DataType::UInt8, true));
    let child = Arc::new(UInt8Array::new(values.into(), None));
    Arc::new(FixedSizeListArray::new(item, width as i32, child, nulls))
}

/// Row-major `max_hamming + 1` block keys per hash; null hashes give null keys.
pub fn mih_keys_column(hashes: &[u64], nulls: Option<&NullBuffer>, max_hamming: usize) -> ArrayRef {
    let widths = mih::block_widths(max_hamming + 1);
    let mut keys = vec![0u64; hashes.len() * widths.len()];
    for (h, out) in hashes.iter().zip(keys.chunks_exact_mut(widths.len())) {
        mih::block_keys(*h, &widths, out);
    }
    let nulls = nulls.and_then(|n| {
        nulls_from_valid(n.iter().flat_map(|v| std::iter::repeat_n(v, widths.len())))
    });
    Arc::new(PrimitiveArray::<UInt64Type>::new(keys.into(), nulls))
}
