//! Arrow column views the kernels read, and builders for the arrays they return.
//!
//! Inputs arrive as one or more chunks (a pyarrow `ChunkedArray` or a single `Array`); kernels
//! see one logical column and return one contiguous array. Byte access goes through the
//! offsets and values buffers directly, so string data is never copied and never assumed to
//! be valid UTF-8 (the C data interface import skips validation).

use arrow_array::types::{GenericBinaryType, GenericStringType};
use arrow_array::{Array, GenericByteArray, OffsetSizeTrait};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use rayon::prelude::*;

use crate::error::{KResult, KernelError};

/// Rows per rayon task; big enough to amortise scheduling, small enough to balance.
const PAR_MIN_LEN: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BytesKind {
    Utf8,
    Binary,
}

#[derive(Debug, Clone)]
enum Offsets {
    Small(OffsetBuffer<i32>),
    Large(OffsetBuffer<i64>),
}

#[derive(Debug, Clone)]
struct BytesChunk {
    offsets: Offsets,
    values: Buffer,
    nulls: Option<NullBuffer>,
    len: usize,
}

impl BytesChunk {
    fn from_array<O: OffsetSizeTrait, T>(
        a: &GenericByteArray<T>,
        wrap: fn(OffsetBuffer<O>) -> Offsets,
    ) -> Self
    where
        T: arrow_array::types::ByteArrayType<Offset = O>,
    {
        Self {
            offsets: wrap(a.offsets().clone()),
            values: a.values().clone(),
            nulls: a.nulls().cloned(),
            len: a.len(),
        }
    }

    #[inline]
    fn get(&self, i: usize) -> Option<&[u8]> {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return None;
        }
        let (start, end) = match &self.offsets {
            Offsets::Small(o) => (o[i] as usize, o[i + 1] as usize),
            Offsets::Large(o) => (o[i] as usize, o[i + 1] as usize),
        };
        Some(&self.values.as_slice()[start..end])
    }
}

/// A string or binary column (possibly chunked), read as byte slices.
#[derive(Debug, Clone)]
pub struct BytesColumn {
    kind: BytesKind,
    chunks: Vec<BytesChunk>,
    len: usize,
}

/// Human-readable list of the byte types accepted by [`BytesColumn::from_chunks`].
pub const BYTES_TYPES: &str = "string, large_string, binary or large_binary";
pub const STRING_TYPES: &str = "string or large_string";

impl BytesColumn {
    /// View `chunks` (all of one type) as a byte column; `what` names the expected types in the error.
    pub fn from_chunks(chunks: &[ArrayData], allow_binary: bool) -> KResult<Self> {
        let expected = if allow_binary {
            BYTES_TYPES
        } else {
            STRING_TYPES
        };
        let mut kind = None;
        let mut out = Vec::with_capacity(chunks.len());
        for data in chunks {
            let (k, chunk) = match data.data_type() {
                DataType::Utf8 => {
                    let a = GenericByteArray::<GenericStringType<i32>>::from(data.clone());
                    (BytesKind::Utf8, BytesChunk::from_array(&a, Offsets::Small))
                }
                DataType::LargeUtf8 => {
                    let a = GenericByteArray::<GenericStringType<i64>>::from(data.clone());
                    (BytesKind::Utf8, BytesChunk::from_array(&a, Offsets::Large))
                }
                DataType::Binary if allow_binary => {
                    let a = GenericByteArray::<GenericBinaryType<i32>>::from(data.clone());
                    (
                        BytesKind::Binary,
                        BytesChunk::from_array(&a, Offsets::Small),
                    )
                }
                DataType::LargeBinary if allow_binary => {
                    let a = GenericByteArray::<GenericBinaryType<i64>>::from(data.clone());
                    (
                        BytesKind::Binary,
                        BytesChunk::from_array(&a, Offsets::Large),
                    )
                }
                other => {
                    return Err(KernelError::type_err(format!(
                        "expected a {expected} array, got {other}"
                    )))
                }
            };
            if kind.is_some_and(|prev| prev != k) {
                return Err(KernelError::type_err("chunks have different types"));
            }
            kind = Some(k);
            out.push(chunk);
        }
        let len = out.iter().map(|c| c.len).sum();
        Ok(Self {
            kind: kind.unwrap_or(BytesKind::Utf8),
            chunks: out,
            len,
        })
    }

    pub fn kind(&self) -> BytesKind {
        self.kind
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Validity of the whole column (`None` when it has no nulls).
    pub fn nulls(&self) -> Option<NullBuffer> {
        concat_nulls(
            self.chunks.iter().map(|c| (c.len, c.nulls.as_ref())),
            self.len,
        )
    }

    /// Row `i` as bytes (sequential access, e.g. for tests and builders).
    pub fn get(&self, mut i: usize) -> Option<&[u8]> {
        for c in &self.chunks {
            if i < c.len {
                return c.get(i);
            }
            i -= c.len;
        }
        panic!("row index out of bounds");
    }

    /// Apply `f` to every row in parallel (on the current rayon pool), in row order.
    /// `init` creates per-task scratch state (e.g. a reusable `String`).
    pub fn par_map<'a, T, S, I, F>(&'a self, init: I, f: F) -> Vec<T>
    where
        T: Send,
        I: Fn() -> S + Sync + Send,
        F: Fn(&mut S, Option<&'a [u8]>) -> T + Sync + Send,
    {
        let mut out = Vec::with_capacity(self.len);
        for c in &self.chunks {
            out.par_extend(
                (0..c.len)
                    .into_par_iter()
                    .with_min_len(PAR_MIN_LEN)
                    .map_init(&init, |s, i| f(s, c.get(i))),
            );
        }
        out
    }
}

impl BytesColumn {
    /// Fill `out` (`len * width` values, row-major) in parallel: `f(scratch, row, out_row)`.
    pub fn par_fill_rows<T, S, I, F>(&self, out: &mut [T], width: usize, init: I, f: F)
    where
        T: Send,
        I: Fn() -> S + Sync + Send,
        F: Fn(&mut S, Option<&[u8]>, &mut [T]) + Sync + Send,
    {
        assert_eq!(out.len(), self.len * width, "output size");
        if width == 0 {
            return;
        }
        let mut rest = out;
        for c in &self.chunks {
            let (mine, tail) = rest.split_at_mut(c.len * width);
            rest = tail;
            mine.par_chunks_mut(width)
                .with_min_len(16)
                .enumerate()
                .for_each_init(&init, |s, (i, row)| f(s, c.get(i), row));
        }
    }
}

/// Concatenate per-chunk validity into one buffer (`None` when there is no null at all).
pub fn concat_nulls<'a>(
    parts: impl Iterator<Item = (usize, Option<&'a NullBuffer>)> + Clone,
    total: usize,
) -> Option<NullBuffer> {
    let parts: Vec<_> = parts.collect();
    if parts
        .iter()
        .all(|(_, n)| n.is_none_or(|n| n.null_count() == 0))
    {
        return None;
    }
    if let [(_, Some(n))] = parts.as_slice() {
        return Some((*n).clone());
    }
    let mut b = BooleanBufferBuilder::new(total);
    for (len, nulls) in parts {
        match nulls {
            Some(n) => b.append_buffer(n.inner()),
            None => b.append_n(len, true),
        }
    }
    Some(NullBuffer::new(b.finish()))
}

/// Null buffer from per-row validity flags (`None` when all valid).
pub fn nulls_from_valid(valid: impl IntoIterator<Item = bool>) -> Option<NullBuffer> {
    let n = NullBuffer::new(BooleanBuffer::from_iter(valid));
    (n.null_count() > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{BinaryArray, LargeStringArray, StringArray};

    #[test]
    fn reads_sliced_chunks_with_nulls() {
        let a = StringArray::from(vec![Some("a"), None, Some("ccc"), Some("dd")]).slice(1, 3);
        let b = LargeStringArray::from(vec![Some("x"), None]);
        let col = BytesColumn::from_chunks(&[a.to_data(), b.to_data()], false).unwrap();
        assert_eq!(col.len(), 5);
        let got: Vec<_> = (0..5).map(|i| col.get(i).map(|s| s.to_vec())).collect();
        assert_eq!(
            got,
            vec![
                None,
                Some(b"ccc".to_vec()),
                Some(b"dd".to_vec()),
                Some(b"x".to_vec()),
                None
            ]
        );
        let nulls = col.nulls().unwrap();
        assert_eq!(
            nulls.iter().collect::<Vec<_>>(),
            vec![false, true, true, true, false]
        );
        let lens = col.par_map(|| (), |_, v| v.map(<[u8]>::len));
        assert_eq!(lens, vec![None, Some(3), Some(2), Some(1), None]);
    }

    #[test]
    fn rejects_binary_when_strings_required() {
        let b = BinaryArray::from(vec![&b"\xff"[..]]);
        assert!(matches!(
            BytesColumn::from_chunks(&[b.to_data()], false),
            Err(KernelError::Type(_))
        ));
        let col = BytesColumn::from_chunks(&[b.to_data()], true).unwrap();
        assert_eq!(col.kind(), BytesKind::Binary);
        assert_eq!(col.nulls(), None);
    }
}
