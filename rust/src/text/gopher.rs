//! Gopher's quality and repetition rules (Rae et al. 2021, Table A1) with DataTrove 0.10.1's exact
//! definitions: every count is taken as DataTrove takes it (code points, Python whitespace, spaCy words).
//! A threshold of `None` (or 0, which DataTrove's `if self.x and ...` also skips) disables its rule.

use std::collections::HashMap;

use xxhash_rust::xxh3::Xxh3DefaultBuilder;

use super::ngrams::{all_duplicate_chars_with, top_ngram_chars, ConcatHashes};

type Map<K, V> = HashMap<K, V, Xxh3DefaultBuilder>;

use super::chars::{char_len, count_sub, is_alpha, is_dt_punct, is_space, py_strip, splitlines};

/// Thresholds of `GopherQualityFilter`, named as its constructor arguments.
#[derive(Debug, Clone)]
pub struct QualityParams {
    pub min_doc_words: Option<f64>,
    pub max_doc_words: Option<f64>,
    pub min_avg_word_length: Option<f64>,
    pub max_avg_word_length: Option<f64>,
    pub max_symbol_word_ratio: Option<f64>,
    pub max_bullet_lines_ratio: Option<f64>,
    pub max_ellipsis_lines_ratio: Option<f64>,
    pub max_non_alpha_words_ratio: Option<f64>,
    pub min_stop_words: Option<f64>,
    pub stop_words: Vec<String>,
}

impl Default for QualityParams {
    fn default() -> Self {
        Self {
            min_doc_words: Some(50.0),
            max_doc_words: Some(100_000.0),
            min_avg_word_length: Some(3.0),
            max_avg_word_length: Some(10.0),
            max_symbol_word_ratio: Some(0.1),
            max_bullet_lines_ratio: Some(0.9),
            max_ellipsis_lines_ratio: Some(0.3),
            max_non_alpha_words_ratio: Some(0.8),
            min_stop_words: Some(2.0),
            stop_words: ["the", "be", "to", "of", "and", "that", "have", "with"]
                .map(String::from)
                .to_vec(),
        }
    }
}

/// A threshold that is set and non-zero (DataTrove tests thresholds for truthiness).
#[inline]
pub fn on(x: Option<f64>) -> Option<f64> {
    x.filter(|v| *v != 0.0)
}

/// The first Gopher quality rule `words` (the document's tokens) and `text` fail, or `None`.
pub fn quality(text: &str, words: &[&str], p: &QualityParams) -> Option<&'static str> {
    let n_words = words.len() as f64;
    let mut n_non_symbol = 0usize;
    let mut non_symbol_chars = 0usize;
    let mut n_alpha = 0usize;
    for w in words {
        let mut non_symbol = false;
        let mut has_alpha = false;
        for c in w.chars() {
            non_symbol |= !is_dt_punct(c);
            has_alpha |= is_alpha(c);
            if non_symbol && has_alpha {
                break;
            }
        }
        if non_symbol {
            n_non_symbol += 1;
            non_symbol_chars += char_len(w);
        }
        n_alpha += has_alpha as usize;
    }
    let nns = n_non_symbol as f64;
    if on(p.min_doc_words).is_some_and(|t| nns < t) {
        return Some("gopher_short_doc");
    }
    if on(p.max_doc_words).is_some_and(|t| nns > t) {
        return Some("gopher_long_doc");
    }
    // numpy's mean of an empty list is nan, which no comparison trips
    let avg = if n_non_symbol > 0 {
        non_symbol_chars as f64 / nns
    } else {
        f64::NAN
    };
    if on(p.min_avg_word_length).is_some_and(|t| avg < t) {
        return Some("gopher_below_avg_threshold");
    }
    if on(p.max_avg_word_length).is_some_and(|t| avg > t) {
        return Some("gopher_above_avg_threshold");
    }
    if words.is_empty() {
        // DataTrove divides by zero here; a document without a word has nothing to keep
        return Some("gopher_short_doc");
    }
    if let Some(t) = on(p.max_symbol_word_ratio) {
        if count_sub(text, "#") as f64 / n_words > t {
            return Some("gopher_too_many_hashes");
        }
        if (count_sub(text, "...") + count_sub(text, "…")) as f64 / n_words > t {
            return Some("gopher_too_many_ellipsis");
        }
    }
    let bullets = on(p.max_bullet_lines_ratio);
    let ellipsis = on(p.max_ellipsis_lines_ratio);
    if bullets.is_some() || ellipsis.is_some() {
        let (mut n_lines, mut n_bullet, mut n_ell) = (0usize, 0usize, 0usize);
        for line in splitlines(text) {
            n_lines += 1;
            let l = line.trim_start_matches(is_space);
            n_bullet += (l.starts_with('•') || l.starts_with('-')) as usize;
            let r = line.trim_end_matches(is_space);
            n_ell += (r.ends_with("...") || r.ends_with('…')) as usize;
        }
        let n = n_lines.max(1) as f64;
        if bullets.is_some_and(|t| n_bullet as f64 / n > t) {
            return Some("gopher_too_many_bullets");
        }
        if ellipsis.is_some_and(|t| n_ell as f64 / n > t) {
            return Some("gopher_too_many_end_ellipsis");
        }
    }
    if on(p.max_non_alpha_words_ratio).is_some_and(|t| (n_alpha as f64 / n_words) < t) {
        return Some("gopher_below_alpha_threshold");
    }
    if let Some(t) = on(p.min_stop_words) {
        let found = p
            .stop_words
            .iter()
            .filter(|s| words.contains(&s.as_str()))
            .count();
        if (found as f64) < t {
            return Some("gopher_enough_stop_words");
        }
    }
    None
}

/// Thresholds of `GopherRepetitionFilter`, named as its constructor arguments.
#[derive(Debug, Clone)]
pub struct RepetitionParams {
    pub dup_line_frac: Option<f64>,
    pub dup_para_frac: Option<f64>,
    pub dup_line_char_frac: Option<f64>,
    pub dup_para_char_frac: Option<f64>,
    pub top_n_grams: Vec<(usize, f64)>,
    pub dup_n_grams: Vec<(usize, f64)>,
}

impl Default for RepetitionParams {
    fn default() -> Self {
        Self {
            dup_line_frac: Some(0.3),
            dup_para_frac: Some(0.3),
            dup_line_char_frac: Some(0.2),
            dup_para_char_frac: Some(0.2),
            top_n_grams: vec![(2, 0.2), (3, 0.18), (4, 0.16)],
            dup_n_grams: vec![
                (5, 0.15),
                (6, 0.14),
                (7, 0.13),
                (8, 0.12),
                (9, 0.11),
                (10, 0.10),
            ],
        }
    }
}

/// DataTrove's `find_duplicates`: (repeated elements, their characters), repeats after the first.
pub fn find_duplicates<'a>(items: impl Iterator<Item = &'a str>) -> (usize, usize) {
    let mut seen: Map<&str, ()> = Map::default();
    let (mut n, mut chars) = (0, 0);
    for it in items {
        if seen.insert(it, ()).is_some() {
            n += 1;
            chars += char_len(it);
        }
    }
    (n, chars)
}

/// Paragraphs as `re.split(r"\n{2,}", text.strip())`.
fn paragraphs(text: &str) -> impl Iterator<Item = &str> {
    let s = py_strip(text);
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.find("\n\n") {
            Some(i) => {
                let j = i + r[i..].bytes().take_while(|&b| b == b'\n').count();
                rest = Some(&r[j..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// Lines as `re.split("\n+", text)` (empty first / last pieces kept, as Python does).
fn newline_runs(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.find('\n') {
            Some(i) => {
                let j = i + r[i..].bytes().take_while(|&b| b == b'\n').count();
                rest = Some(&r[j..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// The first Gopher repetition rule `text` fails, or `None`. `words` are the document's tokens.
pub fn repetition(text: &str, words: &[&str], p: &RepetitionParams) -> Option<String> {
    if text.is_empty() {
        return Some("empty".into());
    }
    let n_chars = char_len(text) as f64;
    let n_para = paragraphs(text).count() as f64;
    let (dup, dup_chars) = find_duplicates(paragraphs(text));
    if on(p.dup_para_frac).is_some_and(|t| dup as f64 / n_para > t) {
        return Some("dup_para_frac".into());
    }
    if on(p.dup_para_char_frac).is_some_and(|t| dup_chars as f64 / n_chars > t) {
        return Some("dup_para_char_frac".into());
    }
    let n_lines = newline_runs(text).count() as f64;
    let (dup, dup_chars) = find_duplicates(newline_runs(text));
    if on(p.dup_line_frac).is_some_and(|t| dup as f64 / n_lines > t) {
        return Some("dup_line_frac".into());
    }
    if on(p.dup_line_char_frac).is_some_and(|t| dup_chars as f64 / n_chars > t) {
        return Some("dup_line_char_frac".into());
    }
    if p.top_n_grams.is_empty() && p.dup_n_grams.is_empty() {
        return None;
    }
    // words as dense ids (equal strings, equal ids) and code-point lengths
    let mut ids: Map<&str, u32> = Map::with_capacity_and_hasher(words.len(), Default::default());
    let wid: Vec<u32> = words
        .iter()
        .map(|w| {
            let next = ids.len() as u32;
            *ids.entry(w).or_insert(next)
        })
        .collect();
    let wlen: Vec<usize> = words.iter().map(|w| char_len(w)).collect();
    for &(n, frac) in &p.top_n_grams {
        if n == 0 || words.len() < n {
            continue;
        }
        if top_ngram_chars(&wid, &wlen, n) as f64 / n_chars > frac {
            return Some(format!("top_{n}_gram"));
        }
    }
    let concat = ConcatHashes::new(words);
    for &(n, frac) in &p.dup_n_grams {
        if n == 0 {
            continue;
        }
        if all_duplicate_chars_with(&concat, words.len(), &wlen, n) as f64 / n_chars > frac {
            return Some(format!("duplicated_{n}_n_grams"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_and_lines_split_as_python() {
        assert_eq!(
            paragraphs("\n a\n\n\nb\n\nc \n").collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!(
            newline_runs("\na\n\nb\n").collect::<Vec<_>>(),
            ["", "a", "b", ""]
        );
    }
}
