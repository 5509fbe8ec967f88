//! Web-text quality kernels: Gopher quality and repetition, C4 line cleaning, FineWeb rules, and the word
//! tokenizer they share, with DataTrove 0.10.1's decisions. Each function here takes a text column and runs
//! one pass per document on the rayon pool, computing only the statistics the enabled rules reach.
//!
//! Reasons are `&'static str` / `String` as DataTrove names them; `None` keeps the row. A null text is
//! dropped with [`NULL_TEXT`]; bytes that are not UTF-8 (a binary column) are read with U+FFFD replacement,
//! so every row gets a decision.

mod affixes;
pub mod c4;
pub mod chars;
pub mod fineweb;
pub mod gopher;
mod ngrams;
mod tables;
pub mod tokenizer;

use std::borrow::Cow;

use crate::columns::BytesColumn;

pub use c4::{C4Params, C4Result, Counts};
pub use fineweb::FineWebParams;
pub use gopher::{QualityParams, RepetitionParams};
pub use tokenizer::Lang;

/// Reason of a row whose text is null.
pub const NULL_TEXT: &str = "null_text";

/// A row as text: borrowed when valid UTF-8, lossily decoded otherwise.
pub fn as_text(b: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// Reasons (`None` = keep) of `GopherQualityFilter` for every row.
pub fn gopher_quality_column(
    col: &BytesColumn,
    p: &QualityParams,
    lang: Lang,
) -> Vec<Option<Cow<'static, str>>> {
    col.par_map(
        || (),
        |_, row| {
            let Some(b) = row else {
                return Some(NULL_TEXT.into());
            };
            let text = as_text(b);
            let mut words = Vec::new();
            tokenizer::words(&text, lang, &mut words);
            gopher::quality(&text, &words, p).map(Cow::Borrowed)
        },
    )
}

/// Reasons of `GopherRepetitionFilter` for every row (words are only split when the line rules pass).
pub fn gopher_repetition_column(
    col: &BytesColumn,
    p: &RepetitionParams,
    lang: Lang,
) -> Vec<Option<Cow<'static, str>>> {
    let line_only = RepetitionParams {
        top_n_grams: vec![],
        dup_n_grams: vec![],
        ..p.clone()
    };
    col.par_map(
        || (),
        |_, row| {
            let Some(b) = row else {
                return Some(NULL_TEXT.into());
            };
            let text = as_text(b);
            if let Some(r) = gopher::repetition(&text, &[], &line_only) {
                return Some(r.into());
            }
            let mut words = Vec::new();
            tokenizer::words(&text, lang, &mut words);
            gopher::repetition(&text, &words, p).map(Cow::Owned)
        },
    )
}

/// Reasons of `FineWebQualityFilter` for every row.
pub fn fineweb_column(
    col: &BytesColumn,
    p: &FineWebParams,
    lang: Lang,
) -> Vec<Option<Cow<'static, str>>> {
    col.par_map(
        || (),
        |_, row| {
            let Some(b) = row else {
                return Some(NULL_TEXT.into());
            };
            let text = as_text(b);
            // the word count is only read by the last rule: count words only when the others pass
            if let Some(r) = fineweb::fineweb(&text, usize::MAX, p) {
                return Some(r.into());
            }
            let mut n = 0usize;
            tokenizer::tokenize(&text, lang, &mut |_, sp| n += usize::from(!sp));
            fineweb::fineweb(&text, n, p).map(Cow::Borrowed)
        },
    )
}

/// `C4QualityFilter` on every row: (cleaned text or `None` when dropped/null, reason, line counters summed).
pub type C4Column = (Vec<Option<String>>, Vec<Option<Cow<'static, str>>>, Counts);

pub fn c4_column(col: &BytesColumn, p: &C4Params, lang: Lang) -> C4Column {
    let per_row: Vec<(Option<String>, Option<Cow<'static, str>>, Counts)> = col.par_map(
        || (),
        |_, row| {
            let mut counts = Counts::default();
            let Some(b) = row else {
                return (None, Some(NULL_TEXT.into()), counts);
            };
            match c4::c4(&as_text(b), p, lang, &mut counts) {
                C4Result::Keep(t) => (Some(t), None, counts),
                C4Result::Drop(r) => (None, Some(r.into()), counts),
            }
        },
    );
    let mut total = Counts::default();
    let mut texts = Vec::with_capacity(per_row.len());
    let mut reasons = Vec::with_capacity(per_row.len());
    for (t, r, c) in per_row {
        for (a, b) in total.iter_mut().zip(c) {
            *a += b;
        }
        texts.push(t);
        reasons.push(r);
    }
    (texts, reasons, total)
}

/// The words of every row (`None` for a null row), as DataTrove's `split_into_words` gives them.
pub fn words_column(col: &BytesColumn, lang: Lang) -> Vec<Option<Vec<String>>> {
    col.par_map(
        || (),
        |_, row| {
            let text = as_text(row?);
            let mut words = Vec::new();
            tokenizer::words(&text, lang, &mut words);
            Some(words.iter().map(|w| (*w).to_owned()).collect())
        },
    )
}

/// Sentences spaCy's sentencizer finds in every row (`None` for null).
pub fn sentences_column(col: &BytesColumn, lang: Lang) -> Vec<Option<u32>> {
    col.par_map(
        || (),
        |_, row| row.map(|b| c4::sentence_count(&as_text(b), lang) as u32),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all_rules(text: &str) {
        for lang in [Lang::English, Lang::Unicode] {
            let mut words = Vec::new();
            tokenizer::words(text, lang, &mut words);
            // tokens are non-empty slices of the text, in order, without whitespace inside (English)
            let mut at = 0;
            for w in &words {
                let off = w.as_ptr() as usize - text.as_ptr() as usize;
                assert!(off >= at && !w.is_empty());
                at = off + w.len();
            }
            let _ = gopher::quality(text, &words, &QualityParams::default());
            let _ = gopher::repetition(text, &words, &RepetitionParams::default());
            let _ = fineweb::fineweb(text, words.len(), &FineWebParams::default());
            let mut c = Counts::default();
            let _ = c4::c4(text, &C4Params::default(), lang, &mut c);
            let no_punct = C4Params {
                filter_no_terminal_punct: false,
                split_paragraph: false,
                ..C4Params::default()
            };
            let _ = c4::c4(text, &no_punct, lang, &mut c);
        }
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(256))]

        #[test]
        fn fuzz_random_unicode_never_panics(s in "\\PC{0,300}") {
            all_rules(&s);
        }

        #[test]
        fn fuzz_affix_heavy_text_never_panics(s in "[a-zA-Z0-9 .,!?'\"()\\[\\]{}#…•\\-–—$%°/:;<>=+*^~\n\r\t@]{0,300}") {
            all_rules(&s);
        }
    }

    #[test]
    fn bad_inputs_get_a_decision() {
        // 1 MB here (debug builds are slow); the Python tests run 10 MB through the release build
        let big = "a".repeat(1_000_000);
        assert_eq!(
            gopher::quality(&big, &["x"; 1], &QualityParams::default()),
            Some("gopher_short_doc")
        );
        for t in ["", "   ", "!!! ??? ...", &big] {
            all_rules(t);
        }
        assert_eq!(
            gopher::repetition("", &[], &RepetitionParams::default()).as_deref(),
            Some("empty")
        );
        assert_eq!(
            as_text(b"ok \xed\xa0\x80 bytes"),
            "ok \u{fffd}\u{fffd}\u{fffd} bytes"
        );
    }
}
