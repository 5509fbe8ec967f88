//! The block model's training data: every unit of every page with its text and features, for
//! `benchmarks/train_html_blocks.py` (through `mdf_kernels.html_blocks`). The trainer labels units from the
//! reference texts and fits the model on exactly the features the kernel computes when it extracts.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::{
    ArrayRef, FixedSizeListArray, Float32Array, StringArray, StructArray, UInt32Array,
};
use arrow_schema::{DataType, Field, Fields};
use rayon::prelude::*;

use super::content::blocks;
use super::content::features::N;
use super::parse_page;
use crate::columns::{BytesColumn, BytesKind};

/// One page's units: (text, features) in document order; none for a null page or one that panicked.
fn page_units(
    bytes: &[u8],
    charset: Option<&str>,
    is_utf8: bool,
    max_bytes: usize,
) -> Vec<(String, [f32; N])> {
    catch_unwind(AssertUnwindSafe(|| {
        let (doc, _, _) = parse_page(bytes, charset, is_utf8, max_bytes, true);
        let page = blocks::page(&doc);
        let mut buf = Vec::new();
        (0..page.units.len())
            .map(|u| {
                let mut f = [0f32; N];
                page.features(u, &mut f);
                buf.clear();
                page.unit_text(u, &mut buf);
                (String::from_utf8_lossy(&buf).into_owned(), f)
            })
            .collect()
    }))
    .unwrap_or_default()
}

/// `struct<page: uint32, text: string, features: fixed_size_list<float32>[N]>`, one row per unit of every
/// page of `pages` (`page` is the row index); `charsets` as in [`super::extract_column`].
pub fn unit_table(
    pages: &BytesColumn,
    charsets: Option<&BytesColumn>,
    max_bytes: usize,
) -> ArrayRef {
    let is_utf8 = pages.kind() == BytesKind::Utf8;
    let per_page: Vec<Vec<(String, [f32; N])>> = (0..pages.len())
        .into_par_iter()
        .with_max_len(1)
        .map(|i| {
            let cs = charsets
                .and_then(|c| c.get(i))
                .and_then(|b| std::str::from_utf8(b).ok());
            pages
                .get(i)
                .map(|p| page_units(p, cs, is_utf8, max_bytes))
                .unwrap_or_default()
        })
        .collect();
    let rows: usize = per_page.iter().map(Vec::len).sum();
    let mut page = Vec::with_capacity(rows);
    let mut text = Vec::with_capacity(rows);
    let mut values = Vec::with_capacity(rows * N);
    for (i, units) in per_page.into_iter().enumerate() {
        for (t, f) in units {
            page.push(i as u32);
            text.push(t);
            values.extend_from_slice(&f);
        }
    }
    let item = Arc::new(Field::new("item", DataType::Float32, false));
    let features =
        FixedSizeListArray::new(item, N as i32, Arc::new(Float32Array::from(values)), None);
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from(page)),
        Arc::new(StringArray::from(text)),
        Arc::new(features),
    ];
    let fields: Fields = ["page", "text", "features"]
        .iter()
        .zip(&cols)
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), false))
        .collect();
    Arc::new(StructArray::new(fields, cols, None))
}
