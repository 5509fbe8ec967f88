//! Gopher's quality and repetition rules (Rae et al. 2021, Table A1) with DataTrove 0.10.1's exact
//! definitions: every count is taken as DataTrove takes it (code points, Python whitespace, spaCy words).
//! A threshold of `None` (or 0, which DataTrove's `if self.x and ...` also skips) disables its rule.

use std::collections::HashMap;

use xxhash_rust::xxh3::{xxh3_64, Xxh3, Xxh3DefaultBuilder};

type Map<K, V> = HashMap<K, V, Xxh3DefaultBuilder>;

/// Keys that are already hashes: used as they are.
#[derive(Default, Clone, Copy)]
struct IdentityHasher(u64);

impl std::hash::Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

type HashedMap<V> = HashMap<u64, V, std::hash::BuildHasherDefault<IdentityHasher>>;

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

fn ngram_key(ids: &[u32]) -> u64 {
    let mut buf = [0u8; 4 * 16];
    if ids.len() <= 16 {
        for (i, id) in ids.iter().enumerate() {
            buf[4 * i..4 * i + 4].copy_from_slice(&id.to_le_bytes());
        }
        return xxh3_64(&buf[..4 * ids.len()]);
    }
    let mut h = Xxh3::new();
    for id in ids {
        h.update(&id.to_le_bytes());
    }
    h.digest()
}

/// `find_top_duplicate` of the space-joined n-grams: length x count of the most frequent one, the first
/// seen among equally frequent ones (what `Counter.most_common(1)` returns).
fn top_ngram_chars(wid: &[u32], wlen: &[usize], n: usize) -> usize {
    // key -> (count, first position)
    let mut counts: HashedMap<(u32, u32)> =
        HashedMap::with_capacity_and_hasher(wid.len(), Default::default());
    for i in 0..=wid.len() - n {
        let e = counts
            .entry(ngram_key(&wid[i..i + n]))
            .or_insert((0, i as u32));
        e.0 += 1;
    }
    let mut best: Option<(u32, u32)> = None; // (count, first)
    for &(c, first) in counts.values() {
        best = match best {
            Some((bc, bf)) if bc > c || (bc == c && bf < first) => Some((bc, bf)),
            _ => Some((c, first)),
        };
    }
    let (count, first) = best.unwrap_or((0, 0));
    let f = first as usize;
    let len: usize = wlen[f..f + n].iter().sum::<usize>() + n - 1;
    len * count as usize
}

/// Mersenne prime 2^61 - 1: modulus of the polynomial hash of byte ranges.
const M61: u64 = (1 << 61) - 1;
const BASE: u64 = 0x1F3D_5B79_A2C4_E613 % M61;

#[inline]
fn mulmod(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    let r = (p as u64 & M61) + (p >> 61) as u64;
    let r = if r >= M61 { r - M61 } else { r };
    if r >= M61 {
        r - M61
    } else {
        r
    }
}

fn powmod(mut b: u64, mut e: u64) -> u64 {
    let mut r = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = mulmod(r, b);
        }
        b = mulmod(b, b);
        e >>= 1;
    }
    r
}

/// Polynomial hashes of the words' concatenated bytes at every word boundary, so the hash of any run of
/// words joined without a separator is two multiplications away (equal bytes, equal hash, however split).
struct ConcatHashes {
    prefix: Vec<u64>,  // hash of bytes before word i
    pow: Vec<u64>,     // BASE^(bytes before word i)
    inv_pow: Vec<u64>, // BASE^-(bytes before word i)
    bytes: Vec<usize>, // bytes before word i
}

impl ConcatHashes {
    fn new(words: &[&str]) -> Self {
        let inv_base = powmod(BASE, M61 - 2);
        let n = words.len() + 1;
        let (mut prefix, mut pow, mut inv_pow, mut bytes) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let (mut h, mut p, mut ip, mut b) = (0u64, 1u64, 1u64, 0usize);
        for w in words {
            prefix.push(h);
            pow.push(p);
            inv_pow.push(ip);
            bytes.push(b);
            for &c in w.as_bytes() {
                h = mulmod(h, BASE) + u64::from(c) + 1;
                h = if h >= M61 { h - M61 } else { h };
            }
            p = mulmod(p, powmod(BASE, w.len() as u64));
            ip = mulmod(ip, powmod(inv_base, w.len() as u64));
            b += w.len();
        }
        prefix.push(h);
        pow.push(p);
        inv_pow.push(ip);
        bytes.push(b);
        Self {
            prefix,
            pow,
            inv_pow,
            bytes,
        }
    }

    /// Key of words `i..j` joined: (hash of their bytes, byte length) mixed into one u64.
    #[inline]
    fn key(&self, i: usize, j: usize) -> u64 {
        let shift = mulmod(self.pow[j], self.inv_pow[i]);
        let sub = mulmod(self.prefix[i], shift);
        let h = if self.prefix[j] >= sub {
            self.prefix[j] - sub
        } else {
            self.prefix[j] + M61 - sub
        };
        h ^ ((self.bytes[j] - self.bytes[i]) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// `find_all_duplicate`: characters of n-grams (joined without a separator, so different splits of the same
/// characters are the same n-gram) already seen, skipping past each repeat.
#[cfg(test)]
fn all_duplicate_chars(words: &[&str], wlen: &[usize], n: usize) -> usize {
    all_duplicate_chars_with(&ConcatHashes::new(words), words.len(), wlen, n)
}

fn all_duplicate_chars_with(h: &ConcatHashes, n_words: usize, wlen: &[usize], n: usize) -> usize {
    if n_words < n {
        return 0;
    }
    let mut seen: HashedMap<()> = HashedMap::with_capacity_and_hasher(n_words, Default::default());
    let (mut repeated, mut idx) = (0usize, 0usize);
    while idx < n_words - n + 1 {
        if seen.insert(h.key(idx, idx + n), ()).is_some() {
            repeated += wlen[idx..idx + n].iter().sum::<usize>();
            idx += n;
        } else {
            idx += 1;
        }
    }
    repeated
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

    #[test]
    fn joined_ngrams_collide_as_in_datatrove() {
        let w = ["ab", "c", "x", "a", "bc", "y"];
        let l: Vec<usize> = w.iter().map(|s| s.len()).collect();
        assert_eq!(all_duplicate_chars(&w, &l, 2), 3);
    }

    #[test]
    fn top_ngram_tie_takes_first_seen() {
        // "a b" and "cc dd" both twice: the first seen ("a b", 3 chars) wins
        let ids = [0, 1, 2, 3, 0, 1, 2, 3];
        let lens = [1, 1, 2, 2, 1, 1, 2, 2];
        assert_eq!(top_ngram_chars(&ids, &lens, 2), 6);
    }
}
