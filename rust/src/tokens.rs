//! Tokenizing a text column with a Hugging Face `tokenizer.json`, through the `tokenizers` crate (the library
//! behind the Python package, so the ids are the ones `Tokenizer.encode_batch` gives).
//!
//! A batch's rows are encoded on the kernel pool (byte-level BPE files by `tokens_fast`, others by one `encode_fast`
//! per row: the same normalizer, pre-tokenizer, model and post-processor as `encode_batch`, without offsets), then
//! framed (optional BOS / EOS ids) and cut to `max_tokens` (truncated, or split into pieces that are each framed).
//! The result is one flat `u32` buffer with row offsets: an Arrow `list<uint32>` without a copy per row in Python.
//!
//! Padding and truncation settings stored in the file are switched off: padding would make a row's ids depend on
//! its batch, and a file's truncation (BERT's 512) would cut documents silently; `max_tokens` is the one length
//! rule, counted.

use std::borrow::Cow;

use tokenizers::Tokenizer;

use crate::columns::BytesColumn;
use crate::error::{KResult, KernelError};
use crate::tokens_fast::FastBpe;

/// What to do with a document longer than `max_tokens` (framing tokens included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongDocuments {
    /// Keep its first `max_tokens` tokens (BOS/EOS kept around the cut content).
    Truncate,
    /// Cut its content into pieces of `max_tokens - framing` tokens, each framed; a row's tokens are
    /// the pieces one after another, so every piece but the last is exactly `max_tokens` long.
    Split,
}

/// How a row's ids are framed and cut.
#[derive(Debug, Clone, Copy)]
pub struct EncodeOptions {
    pub add_special_tokens: bool,
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub max_tokens: Option<usize>,
    pub long: LongDocuments,
}

impl EncodeOptions {
    fn framing(&self) -> usize {
        usize::from(self.bos.is_some()) + usize::from(self.eos.is_some())
    }

    /// Check `max_tokens` leaves room for content.
    pub fn check(&self) -> KResult<()> {
        match self.max_tokens {
            Some(m) if m <= self.framing() => Err(KernelError::value(format!(
                "max_tokens = {m} leaves no room for text beside {} BOS/EOS token(s); make it larger",
                self.framing()
            ))),
            _ => Ok(()),
        }
    }
}

/// Counts over one encoded batch (summed into the operator's counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EncodeStats {
    /// Rows whose text is null.
    pub null: u64,
    /// Rows whose text is empty, or gives no token at all.
    pub empty: u64,
    /// Rows cut to `max_tokens`.
    pub truncated: u64,
    /// Tokens those cuts removed.
    pub tokens_cut: u64,
    /// Rows split into several pieces.
    pub split: u64,
    /// Pieces of the split rows.
    pub pieces: u64,
    /// Rows whose invalid UTF-8 was replaced (U+FFFD) before encoding (a binary column).
    pub invalid_utf8_rows: u64,
}

/// The encoded column: `values[offsets[i]..offsets[i + 1]]` are row `i`'s ids.
#[derive(Debug, Default)]
pub struct Encoded {
    pub values: Vec<u32>,
    pub offsets: Vec<i64>,
    pub stats: EncodeStats,
}

/// A loaded `tokenizer.json`, shared by every thread that encodes with it.
pub struct TextTokenizer {
    inner: Tokenizer,
    /// Byte-level BPE files are encoded by `tokens_fast` (same ids, without the crate's per-piece bookkeeping).
    fast: Option<FastBpe>,
}

fn load_error(what: &str, e: impl std::fmt::Display) -> KernelError {
    KernelError::value(format!(
        "{what} is not a Hugging Face tokenizer.json ({e}); give the tokenizer.json a tokenizers \
         Tokenizer.save() wrote"
    ))
}

impl TextTokenizer {
    /// Load from a `tokenizer.json` file.
    pub fn from_file(path: &str, fast: bool) -> KResult<Self> {
        let bytes = std::fs::read(path)
            .map_err(|e| KernelError::value(format!("cannot read {path:?}: {e}")))?;
        Self::from_bytes(&bytes, fast)
            .map_err(|e| KernelError::value(format!("{path:?}: {}", e.message())))
    }

    /// Load from the text of a `tokenizer.json`; `fast`: encode byte-level BPE files with `tokens_fast`.
    pub fn from_bytes(json: &[u8], fast: bool) -> KResult<Self> {
        let mut inner = Tokenizer::from_bytes(json).map_err(|e| load_error("the file", e))?;
        inner.with_padding(None);
        inner
            .with_truncation(None)
            .map_err(|e| load_error("the file", e))?;
        let fast = if fast {
            serde_json::from_slice::<serde_json::Value>(json)
                .ok()
                .and_then(|v| FastBpe::from_json(&v, &inner))
        } else {
            None
        };
        Ok(Self { inner, fast })
    }

    /// Whether this tokenizer's texts go through `tokens_fast`.
    pub fn is_fast(&self) -> bool {
        self.fast.is_some()
    }

    /// Vocabulary size, added tokens included (the largest id + 1 for the usual files).
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// One more than the largest id the tokenizer can give.
    pub fn id_bound(&self) -> u64 {
        let vocab = self.inner.get_vocab(true);
        vocab
            .values()
            .map(|&id| u64::from(id) + 1)
            .max()
            .unwrap_or(0)
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// The ids `encode_batch([text], add_special_tokens)` gives for one text.
    pub fn encode_text(&self, text: &str, add_special_tokens: bool) -> KResult<Vec<u32>> {
        if let Some(fast) = &self.fast {
            let mut out = Vec::new();
            fast.encode(&self.inner, text, add_special_tokens, &mut out);
            return Ok(out);
        }
        let enc = self
            .inner
            .encode_fast(text, add_special_tokens)
            .map_err(|e| KernelError::value(format!("encoding failed: {e}")))?;
        Ok(enc.get_ids().to_vec())
    }

    /// Encode every row of `col` on the current rayon pool, framed and cut per `opts`.
    pub fn encode_column(&self, col: &BytesColumn, opts: &EncodeOptions) -> KResult<Encoded> {
        opts.check()?;
        let rows: Vec<KResult<Row>> = col.par_map(|| (), |_, text| self.encode_row(text, opts));
        let mut out = Encoded {
            values: Vec::new(),
            offsets: Vec::with_capacity(rows.len() + 1),
            stats: EncodeStats::default(),
        };
        let total: usize = rows
            .iter()
            .map(|r| r.as_ref().map_or(0, |r| r.ids.len()))
            .sum();
        out.values.reserve_exact(total);
        out.offsets.push(0);
        for row in rows {
            let row = row?;
            out.values.extend_from_slice(&row.ids);
            out.offsets.push(out.values.len() as i64);
            add_stats(&mut out.stats, &row);
        }
        Ok(out)
    }

    fn encode_row(&self, text: Option<&[u8]>, opts: &EncodeOptions) -> KResult<Row> {
        let Some(bytes) = text else {
            return Ok(Row::marked(Mark::Null));
        };
        if bytes.is_empty() {
            return Ok(Row::marked(Mark::Empty));
        }
        let (text, invalid) = match std::str::from_utf8(bytes) {
            Ok(s) => (Cow::Borrowed(s), false),
            Err(_) => (String::from_utf8_lossy(bytes), true),
        };
        let content = self.encode_text(&text, opts.add_special_tokens)?;
        if content.is_empty() {
            return Ok(Row::marked(Mark::Empty));
        }
        let mut row = frame(content, opts);
        row.invalid_utf8 = invalid;
        Ok(row)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    None,
    Null,
    Empty,
}

#[derive(Debug)]
struct Row {
    ids: Vec<u32>,
    mark: Mark,
    cut: usize,
    pieces: usize,
    invalid_utf8: bool,
}

impl Row {
    fn marked(mark: Mark) -> Self {
        Self {
            ids: Vec::new(),
            mark,
            cut: 0,
            pieces: 0,
            invalid_utf8: false,
        }
    }
}

fn add_stats(s: &mut EncodeStats, row: &Row) {
    match row.mark {
        Mark::Null => s.null += 1,
        Mark::Empty => s.empty += 1,
        Mark::None => {}
    }
    if row.cut > 0 {
        s.truncated += 1;
        s.tokens_cut += row.cut as u64;
    }
    if row.pieces > 1 {
        s.split += 1;
        s.pieces += row.pieces as u64;
    }
    s.invalid_utf8_rows += u64::from(row.invalid_utf8);
}

/// BOS + content + EOS, cut to `max_tokens` as `opts.long` says.
fn frame(content: Vec<u32>, opts: &EncodeOptions) -> Row {
    let framing = opts.framing();
    let room = opts.max_tokens.map(|m| m - framing);
    let push = |ids: &mut Vec<u32>, piece: &[u32]| {
        ids.extend(opts.bos);
        ids.extend_from_slice(piece);
        ids.extend(opts.eos);
    };
    let mut row = Row::marked(Mark::None);
    match room {
        Some(room) if content.len() > room => match opts.long {
            LongDocuments::Truncate => {
                row.ids.reserve_exact(room + framing);
                push(&mut row.ids, &content[..room]);
                row.cut = content.len() - room;
                row.pieces = 1;
            }
            LongDocuments::Split => {
                let pieces = content.len().div_ceil(room);
                row.ids.reserve_exact(content.len() + pieces * framing);
                for piece in content.chunks(room) {
                    push(&mut row.ids, piece);
                }
                row.pieces = pieces;
            }
        },
        _ if framing == 0 => {
            row.ids = content;
            row.pieces = 1;
        }
        _ => {
            row.ids.reserve_exact(content.len() + framing);
            push(&mut row.ids, &content);
            row.pieces = 1;
        }
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, StringArray};

    /// A WordLevel tokenizer over a few words, split on whitespace: written inline, every id predictable.
    const WORDS: &str = r#"{
      "version": "1.0", "truncation": {"direction": "Right", "max_length": 2, "strategy": "LongestFirst", "stride": 0},
      "padding": null,
      "added_tokens": [
        {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
        {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
        {"id": 2, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
      ],
      "normalizer": null,
      "pre_tokenizer": {"type": "WhitespaceSplit"},
      "post_processor": null,
      "decoder": null,
      "model": {"type": "WordLevel", "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "a": 3, "b": 4, "c": 5, "d": 6, "e": 7}, "unk_token": "<unk>"}
    }"#;

    fn tok() -> TextTokenizer {
        TextTokenizer::from_bytes(WORDS.as_bytes(), true).unwrap()
    }

    fn column(texts: &[Option<&str>]) -> BytesColumn {
        let a = StringArray::from(texts.to_vec());
        BytesColumn::from_chunks(&[a.to_data()], false).unwrap()
    }

    fn rows(e: &Encoded) -> Vec<Vec<u32>> {
        e.offsets
            .windows(2)
            .map(|w| e.values[w[0] as usize..w[1] as usize].to_vec())
            .collect()
    }

    fn opts(max: Option<usize>, long: LongDocuments) -> EncodeOptions {
        EncodeOptions {
            add_special_tokens: true,
            bos: Some(1),
            eos: Some(2),
            max_tokens: max,
            long,
        }
    }

    #[test]
    fn the_files_truncation_is_off_and_rows_are_framed() {
        let t = tok();
        assert_eq!(t.encode_text("a b c d", true).unwrap(), vec![3, 4, 5, 6]);
        let e = t
            .encode_column(
                &column(&[Some("a b c"), None, Some(""), Some("zz e")]),
                &opts(None, LongDocuments::Truncate),
            )
            .unwrap();
        assert_eq!(
            rows(&e),
            vec![vec![1, 3, 4, 5, 2], vec![], vec![], vec![1, 0, 7, 2]]
        );
        assert_eq!((e.stats.null, e.stats.empty), (1, 1));
    }

    #[test]
    fn long_rows_are_truncated_or_split_never_dropped() {
        let t = tok();
        let col = column(&[Some("a b c d e"), Some("a b")]);
        let cut = t
            .encode_column(&col, &opts(Some(4), LongDocuments::Truncate))
            .unwrap();
        assert_eq!(rows(&cut), vec![vec![1, 3, 4, 2], vec![1, 3, 4, 2]]);
        assert_eq!((cut.stats.truncated, cut.stats.tokens_cut), (1, 3));
        let split = t
            .encode_column(&col, &opts(Some(4), LongDocuments::Split))
            .unwrap();
        assert_eq!(
            rows(&split),
            vec![vec![1, 3, 4, 2, 1, 5, 6, 2, 1, 7, 2], vec![1, 3, 4, 2]]
        );
        assert_eq!((split.stats.split, split.stats.pieces), (1, 3));
    }

    #[test]
    fn max_tokens_must_leave_room_for_text() {
        let err = tok()
            .encode_column(&column(&[Some("a")]), &opts(Some(2), LongDocuments::Split))
            .unwrap_err();
        assert!(err.message().contains("max_tokens = 2"), "{err}");
    }

    #[test]
    fn a_damaged_file_is_a_value_error() {
        let err = TextTokenizer::from_bytes(b"{\"version\": ", true)
            .err()
            .unwrap();
        assert!(
            err.message().contains("not a Hugging Face tokenizer.json"),
            "{err}"
        );
        assert_eq!((tok().id_bound(), tok().token_to_id("</s>")), (8, Some(2)));
    }
}
