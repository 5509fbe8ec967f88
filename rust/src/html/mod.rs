//! HTML main-text extraction: bytes of a page in, main text, title and head metadata out.
//!
//! `charset` picks the encoding and decodes to UTF-8; `dom` tokenizes with html5gum (a WHATWG tokenizer)
//! into a light tree; `content` chooses the main content with Readability's rules and writes it out as
//! paragraphs; `tags` (what each tag is) and `furniture` (what class, id, role and style words say) are the
//! tables they read. Every step is linear in the page and iterative, so no page can recurse deep or run long
//! (html5gum itself recursed once per quoted attribute: `rust/vendor/html5gum` is patched). A page longer than
//! [`Options::max_bytes`] is extracted from its first `max_bytes` bytes and flagged `truncated`: a budget in
//! bytes, not time, so the output depends on the page alone, never on how loaded the machine is. A panic (a bug)
//! is caught per page and reported in that row's `error`, so one page can never take down the batch.

pub mod charset;
pub mod content;
pub mod dom;
pub mod furniture;
pub mod lexicon;
pub mod tags;
pub mod training;
pub mod vocab;

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, StringArray, StructArray};
use arrow_schema::{Field, Fields};
use rayon::prelude::*;

use crate::columns::{BytesColumn, BytesKind};
use crate::error::{KResult, KernelError};
use content::model::Model;

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
    /// The page was longer than [`Options::max_bytes`]: `text` comes from its first `max_bytes` bytes.
    pub truncated: bool,
    /// Not empty: extracting this page panicked (a bug) and this is the panic message; the other fields
    /// are empty.
    pub error: String,
}

/// Which error the caller would rather have: text that is not the article (`Recall`), or article text
/// missing (`Precision`). `Balanced` is the default and the rules tuned on both development sets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Favor {
    Precision,
    #[default]
    Balanced,
    Recall,
}

impl Favor {
    /// The mode named `s` (`precision`, `balanced`, `recall`), `None` for anything else.
    pub fn parse(s: &str) -> Option<Favor> {
        match s {
            "precision" => Some(Favor::Precision),
            "balanced" => Some(Favor::Balanced),
            "recall" => Some(Favor::Recall),
            _ => None,
        }
    }
}

/// Per-batch settings.
#[derive(Debug, Clone, Copy)]
pub struct Options<'m> {
    /// Bytes of (decoded) HTML read per page; the rest of a longer page is ignored and the row flagged.
    pub max_bytes: usize,
    /// Precision / recall trade-off of the content choice.
    pub favor: Favor,
    /// The block model that chooses the main text ([`content::model::shipped`] is the trained one); `None`
    /// (this struct's default): Readability's rules alone. The `html_extract` operator passes the shipped model
    /// unless a recipe sets `blocks: rules`.
    pub model: Option<&'m Model>,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            max_bytes: DEFAULT_MAX_BYTES,
            favor: Favor::Balanced,
            model: None,
        }
    }
}

/// Default per-page budget: 64 MiB, about 3 s of one core here, far above real pages (CommonCrawl cuts
/// responses at 1 MiB), so it only cuts input that is pathological rather than large.
pub const DEFAULT_MAX_BYTES: usize = 64 << 20;

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
    let (doc, encoding, truncated) = parse_page(
        bytes,
        http_charset,
        is_utf8,
        opts.max_bytes,
        opts.model.is_some(),
    );
    let text = content::main_text(&doc, opts.favor, opts.model);
    Extracted {
        text,
        title: utf8(doc.title.trim_ascii().to_vec()),
        canonical_url: utf8(doc.canonical.clone()),
        html_lang: utf8(doc.lang.trim_ascii().to_vec()),
        description: utf8(doc.description.trim_ascii().to_vec()),
        encoding,
        truncated,
        error: String::new(),
    }
}

/// Decode (see [`extract`]), cut at `max_bytes` and parse one page: its tree, the encoding it was read in
/// and whether it was cut. `kinds`: fill [`dom::Node::kinds`], which only the block model reads (see
/// [`dom::parse_with`]).
pub fn parse_page(
    bytes: &[u8],
    http_charset: Option<&str>,
    is_utf8: bool,
    max_bytes: usize,
    kinds: bool,
) -> (dom::Doc, &'static str, bool) {
    let (html, encoding): (Cow<'_, str>, &'static str) = if is_utf8 {
        (String::from_utf8_lossy(bytes), "UTF-8")
    } else {
        let (text, enc, _) = charset::decode(bytes, http_charset);
        (text, enc.name())
    };
    let truncated = html.len() > max_bytes;
    let read = if truncated {
        // the last character boundary at or before max_bytes (`floor_char_boundary` needs Rust 1.91)
        let cut = (0..=max_bytes)
            .rev()
            .find(|&i| html.is_char_boundary(i))
            .unwrap_or(0);
        &html[..cut]
    } else {
        &html[..]
    };
    (dom::parse_with(read.as_bytes(), kinds), encoding, truncated)
}

/// [`extract`] that turns a panic (a bug) into a row with only `error` set, instead of failing the batch.
fn extract_guarded(bytes: &[u8], charset: Option<&str>, is_utf8: bool, opts: Options) -> Extracted {
    guarded(|| extract(bytes, charset, is_utf8, opts))
}

/// Run one page's extraction; a panic becomes a row with only `error` set (the panic message).
fn guarded(f: impl FnOnce() -> Extracted) -> Extracted {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic without a message".to_owned());
        Extracted {
            error: format!("internal error in html_extract (please report it): {msg}"),
            ..Extracted::default()
        }
    })
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

/// The struct column the binding returns: `text`, `title`, `truncated` (bool), `error` (null unless the page's
/// extraction panicked), and with `with_metadata` also `canonical_url`, `html_lang`, `description` (null when
/// the page has none) and `encoding`. A null page gives a null row.
pub fn to_struct(rows: &[Option<Extracted>], with_metadata: bool) -> ArrayRef {
    let col = |f: fn(&Extracted) -> &str, empty_is_null: bool| -> ArrayRef {
        Arc::new(StringArray::from_iter(rows.iter().map(|r| {
            r.as_ref()
                .map(f)
                .filter(|s| !(empty_is_null && s.is_empty()))
        })))
    };
    let truncated: ArrayRef = Arc::new(BooleanArray::from_iter(
        rows.iter().map(|r| r.as_ref().map(|e| e.truncated)),
    ));
    let mut cols: Vec<(&str, ArrayRef)> = vec![
        ("text", col(|e| &e.text, false)),
        ("title", col(|e| &e.title, false)),
        ("truncated", truncated),
        ("error", col(|e| &e.error, true)),
    ];
    if with_metadata {
        cols.push(("canonical_url", col(|e| &e.canonical_url, true)));
        cols.push(("html_lang", col(|e| &e.html_lang, true)));
        cols.push(("description", col(|e| &e.description, true)));
        cols.push(("encoding", col(|e| e.encoding, true)));
    }
    let fields: Fields = cols
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let arrays = cols.into_iter().map(|(_, a)| a).collect();
    let nulls = crate::columns::nulls_from_valid(rows.iter().map(Option::is_some));
    Arc::new(StructArray::new(fields, arrays, nulls))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_hostile;
#[cfg(test)]
mod tests_markup;
#[cfg(test)]
mod tests_model;
#[cfg(test)]
mod tests_recall;
#[cfg(test)]
mod tests_recall_de;
