//! HTML main-text extraction: bytes of a page in, main text, title and head metadata out.
//!
//! `charset` picks the encoding and decodes to UTF-8; `dom` tokenizes with html5gum (a WHATWG tokenizer)
//! into a light tree; `content` chooses the main content with Readability's rules and writes it out as
//! paragraphs; `tags` (what each tag is) and `furniture` (what class, id, role and style words say) are the
//! tables they read. Every step is linear in the page and iterative, so no page can recurse deep or run long; a
//! per-page time budget bounds the tokenizer on pathological input.

pub mod charset;
pub mod content;
pub mod dom;
pub mod furniture;
pub mod tags;

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields};
use rayon::prelude::*;

use crate::columns::{BytesColumn, BytesKind};
use crate::error::{KResult, KernelError};

/// What one page yields. Empty strings stand for "absent" in the metadata fields.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub text: String,
    pub title: String,
    pub canonical_url: String,
    pub html_lang: String,
    pub description: String,
    /// Encoding the page was decoded from (`UTF-8` for string input).
    pub encoding: &'static str,
    /// The time budget cut the page: `text` comes from the part read in time.
    pub truncated: bool,
}

/// Per-batch settings.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Tokenizer time per page before the rest of the page is ignored (`None`: no limit).
    pub time_budget: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            time_budget: Some(Duration::from_millis(DEFAULT_BUDGET_MS)),
        }
    }
}

/// Default per-page time budget: far above a 10 MB page's cost (~0.2 s on one core), so it only cuts
/// input that is pathological rather than large.
pub const DEFAULT_BUDGET_MS: u64 = 2_000;

fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Extract one page. `bytes` are raw (decoded per [`charset::decode`] with the HTTP `http_charset`) unless
/// `is_utf8`, which says they are text already (an Arrow string column).
pub fn extract(
    bytes: &[u8],
    http_charset: Option<&str>,
    is_utf8: bool,
    opts: Options,
) -> Extracted {
    let start = Instant::now();
    let (html, encoding): (Cow<'_, str>, &'static str) = if is_utf8 {
        (String::from_utf8_lossy(bytes), "UTF-8")
    } else {
        let (text, enc, _) = charset::decode(bytes, http_charset);
        (text, enc.name())
    };
    let deadline = opts.time_budget.map(|b| start + b);
    let doc = dom::parse(html.as_bytes(), deadline);
    let text = content::main_text(&doc);
    Extracted {
        text,
        title: utf8(doc.title.trim_ascii().to_vec()),
        canonical_url: utf8(doc.canonical.clone()),
        html_lang: utf8(doc.lang.trim_ascii().to_vec()),
        description: utf8(doc.description.trim_ascii().to_vec()),
        encoding,
        truncated: doc.truncated,
    }
}

/// [`extract`] that turns a panic (a bug) into an empty result instead of failing the batch.
fn extract_guarded(bytes: &[u8], charset: Option<&str>, is_utf8: bool, opts: Options) -> Extracted {
    catch_unwind(AssertUnwindSafe(|| extract(bytes, charset, is_utf8, opts))).unwrap_or_default()
}

/// Extract every row of `pages` (string or binary) on the current rayon pool, one page per task. `charsets`
/// (same length, strings) gives each row's HTTP charset; it is ignored for string pages.
pub fn extract_column(
    pages: &BytesColumn,
    charsets: Option<&BytesColumn>,
    opts: Options,
) -> KResult<Vec<Option<Extracted>>> {
    if let Some(c) = charsets {
        if c.len() != pages.len() {
            return Err(KernelError::value(format!(
                "charsets has {} rows but pages has {}; pass the charset column of the same batch",
                c.len(),
                pages.len()
            )));
        }
    }
    let is_utf8 = pages.kind() == BytesKind::Utf8;
    let rows: Vec<(Option<&[u8]>, Option<&str>)> = (0..pages.len())
        .map(|i| {
            let cs = charsets
                .and_then(|c| c.get(i))
                .and_then(|b| std::str::from_utf8(b).ok());
            (pages.get(i), cs)
        })
        .collect();
    Ok(rows
        .par_iter()
        .with_max_len(1)
        .map(|(page, cs)| page.map(|p| extract_guarded(p, *cs, is_utf8, opts)))
        .collect())
}

/// The struct column the binding returns: `text`, `title`, and with `with_metadata` also `canonical_url`,
/// `html_lang`, `description` (null when the page has none) and `encoding`. A null page gives a null row.
pub fn to_struct(rows: &[Option<Extracted>], with_metadata: bool) -> ArrayRef {
    let col = |f: fn(&Extracted) -> &str, empty_is_null: bool| -> ArrayRef {
        Arc::new(StringArray::from_iter(rows.iter().map(|r| {
            r.as_ref()
                .map(f)
                .filter(|s| !(empty_is_null && s.is_empty()))
        })))
    };
    let mut cols: Vec<(&str, ArrayRef)> = vec![
        ("text", col(|e| &e.text, false)),
        ("title", col(|e| &e.title, false)),
    ];
    if with_metadata {
        cols.push(("canonical_url", col(|e| &e.canonical_url, true)));
        cols.push(("html_lang", col(|e| &e.html_lang, true)));
        cols.push(("description", col(|e| &e.description, true)));
        cols.push(("encoding", col(|e| e.encoding, true)));
    }
    let fields: Fields = cols
        .iter()
        .map(|(n, _)| Field::new(*n, DataType::Utf8, true))
        .collect();
    let arrays = cols.into_iter().map(|(_, a)| a).collect();
    let nulls = crate::columns::nulls_from_valid(rows.iter().map(Option::is_some));
    Arc::new(StructArray::new(fields, arrays, nulls))
}

#[cfg(test)]
mod tests;
