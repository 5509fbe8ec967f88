//! Image kernels: header-only metadata, decoding at reduced size, technical quality metrics,
//! perceptual hashes (pHash/dHash as `imagehash` defines them) and multi-index-hashing keys.
//!
//! Plain Rust, no PyO3: `py_image.rs` binds these. Every per-row function returns
//! `Result<_, ImageError>`; a bad row never aborts a batch, it becomes an error string.
//! Pixels are never allocated before the header has been parsed and `width * height` checked
//! against the caller's `max_pixels` (decompression bombs).
//!
//! EXIF orientation is reported by [`meta`] but not applied: quality, hashes and thumbnails
//! see the image in its stored orientation (as `PIL.Image.open` does without `exif_transpose`).

pub mod batch;
pub mod dct;
pub mod decode;
pub mod meta;
pub mod mih;
pub mod phash;
pub mod quality;
pub mod resize;
pub mod thumb;

use rayon::prelude::*;

use crate::columns::BytesColumn;

/// Default `max_pixels`: where Pillow raises `DecompressionBombError` (2 x `Image.MAX_IMAGE_PIXELS`).
pub const MAX_PIXELS: u64 = 178_956_970;

/// Why a row could not be processed; `Display` gives the string put in the `error` column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageError {
    Empty,
    Unsupported,
    TooManyPixels,
    Decode(String),
}

impl std::fmt::Display for ImageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => f.write_str("empty"),
            Self::Unsupported => f.write_str("unsupported_format"),
            Self::TooManyPixels => f.write_str("too_many_pixels"),
            Self::Decode(what) => write!(f, "decode_error: {what}"),
        }
    }
}

pub type ImgResult<T> = Result<T, ImageError>;

pub(crate) fn decode_err(what: impl std::fmt::Display) -> ImageError {
    ImageError::Decode(what.to_string())
}

/// Apply `f` to every row of `col` in parallel, `None` for null rows. `rows_per_task` is 1 for
/// kernels that decode pixels (a row costs milliseconds, so the 256-row chunks of the text
/// kernels would leave threads idle on a small batch) and large for header-only work.
///
/// A panic inside a decoder crate on a malformed file becomes that row's `decode_error`
/// instead of failing the whole batch.
pub fn par_rows<T, F>(col: &BytesColumn, rows_per_task: usize, f: F) -> Vec<Option<ImgResult<T>>>
where
    T: Send,
    F: Fn(&[u8]) -> ImgResult<T> + Sync + Send,
{
    (0..col.len())
        .into_par_iter()
        .with_min_len(rows_per_task)
        .with_max_len(rows_per_task)
        .map(|i| {
            col.get(i).map(|b| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(b))).unwrap_or_else(
                    |p| {
                        let msg = p
                            .downcast_ref::<&str>()
                            .map(|s| (*s).to_owned())
                            .or_else(|| p.downcast_ref::<String>().cloned())
                            .unwrap_or_default();
                        Err(decode_err(format!("decoder panicked: {msg}")))
                    },
                )
            })
        })
        .collect()
}
