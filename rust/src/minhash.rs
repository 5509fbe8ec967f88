//! MinHash signatures (`minhash`).
//!
//! Shingling: the text is normalised like `hash64(normalize="alnum")` (NFC, lowercase,
//! punctuation and symbols deleted, whitespace runs collapsed to one space, trimmed).
//! `Word` shingles are the `ngram`-token windows of that text joined by single spaces;
//! `Char` shingles are its `ngram`-character windows. A text with fewer than `ngram` tokens
//! (characters) gives one shingle, the whole normalised text; an empty one gives none, and its
//! signature is all `u32::MAX`.
//!
//! Hashing: each shingle's UTF-8 bytes are hashed once, `x = xxh3_64(shingle) & 0xFFFF_FFFF`;
//! permutation `i` is the multiply-add-shift hash `h_i(x) = ((a_i * x + b_i) mod 2^64) >> 32`
//! (Dietzfelbinger's strongly universal family for 32-bit keys) with `a_0, b_0, a_1, b_1, ...`
//! drawn from SplitMix64 seeded with `seed`. `signature[i] = min over shingles of h_i(x)`.

use std::str::FromStr;

use xxhash_rust::xxh3::xxh3_64;

use crate::columns::BytesColumn;
use crate::error::{KResult, KernelError};
use crate::normalize::{normalize_into, utf8_text, Normalize};
use crate::permute::{permute_min_halves, Halves};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenizer {
    Word,
    Char,
}

impl FromStr for Tokenizer {
    type Err = KernelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "word" => Ok(Self::Word),
            "char" => Ok(Self::Char),
            other => Err(KernelError::value(format!(
                "tokenizer must be 'word' or 'char', got {other:?}"
            ))),
        }
    }
}

/// SplitMix64 step (Steele et al.), the documented source of the permutation parameters.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `(a, b)` parameters of the permutations: `a_0, b_0, a_1, b_1, ...` from SplitMix64(seed).
pub fn permutation_params(num_perm: usize, seed: u64) -> (Vec<u64>, Vec<u64>) {
    let mut state = seed;
    (0..num_perm)
        .map(|_| (splitmix64(&mut state), splitmix64(&mut state)))
        .unzip()
}

/// Per-thread scratch buffers.
#[derive(Default)]
pub struct Scratch {
    tmp: String,
    text: String,
    bounds: Vec<usize>,
    hashes: Vec<u32>,
}

pub struct MinHasher {
    al: Vec<u32>,
    ah: Vec<u32>,
    bl: Vec<u32>,
    bh: Vec<u32>,
    ngram: usize,
    tokenizer: Tokenizer,
}

impl MinHasher {
    pub fn new(num_perm: usize, ngram: usize, tokenizer: Tokenizer, seed: u64) -> KResult<Self> {
        if num_perm == 0 || num_perm > 1 << 16 {
            return Err(KernelError::value(format!(
                "num_perm must be in 1..=65536, got {num_perm}"
            )));
        }
        if ngram == 0 {
            return Err(KernelError::value("ngram must be >= 1, got 0"));
        }
        let (a, b) = permutation_params(num_perm, seed);
        let lo = |v: &[u64]| v.iter().map(|&v| v as u32).collect::<Vec<_>>();
        let hi = |v: &[u64]| v.iter().map(|&v| (v >> 32) as u32).collect::<Vec<_>>();
        let (al, ah, bl, bh) = (lo(&a), hi(&a), lo(&b), hi(&b));
        Ok(Self {
            al,
            ah,
            bl,
            bh,
            ngram,
            tokenizer,
        })
    }

    pub fn num_perm(&self) -> usize {
        self.al.len()
    }

    /// 32-bit hashes of the shingles of `text` (left in `s.hashes`).
    pub fn shingle_hashes<'s>(&self, text: &str, s: &'s mut Scratch) -> &'s [u32] {
        shingle_text(text, &mut s.tmp, &mut s.text);
        s.hashes.clear();
        s.bounds.clear();
        let t = s.text.as_str();
        if t.is_empty() {
            return &s.hashes;
        }
        let h = |piece: &str| xxh3_64(piece.as_bytes()) as u32;
        match self.tokenizer {
            Tokenizer::Word => {
                // bounds = start of each token plus one past the end.
                word_bounds(t, &mut s.bounds);
                let ntok = s.bounds.len() - 1;
                if ntok <= self.ngram {
                    s.hashes.push(h(t));
                } else {
                    for i in 0..=ntok - self.ngram {
                        s.hashes
                            .push(h(&t[s.bounds[i]..s.bounds[i + self.ngram] - 1]));
                    }
                }
            }
            Tokenizer::Char => {
                s.bounds.extend(t.char_indices().map(|(i, _)| i));
                s.bounds.push(t.len());
                let nchar = s.bounds.len() - 1;
                if nchar <= self.ngram {
                    s.hashes.push(h(t));
                } else {
                    for i in 0..=nchar - self.ngram {
                        s.hashes.push(h(&t[s.bounds[i]..s.bounds[i + self.ngram]]));
                    }
                }
            }
        }
        &s.hashes
    }

    /// Signature of `text` written to `out` (`out.len() == num_perm`).
    pub fn signature_into(&self, text: &str, s: &mut Scratch, out: &mut [u32]) {
        out.fill(u32::MAX);
        let xs = self.shingle_hashes(text, s);
        let p = Halves {
            al: &self.al,
            ah: &self.ah,
            bl: &self.bl,
            bh: &self.bh,
        };
        permute_min_halves(p, xs, out);
    }

    pub fn signature(&self, text: &str) -> Vec<u32> {
        let mut out = vec![0; self.num_perm()];
        self.signature_into(text, &mut Scratch::default(), &mut out);
        out
    }

    /// Signatures of a text column, row-major (`len * num_perm` values); null rows are all MAX.
    pub fn signatures(&self, col: &BytesColumn) -> Vec<u32> {
        let k = self.num_perm();
        let mut out = vec![u32::MAX; col.len() * k];
        col.par_fill_rows(&mut out, k, Scratch::default, |s, v, row| {
            if let Some(b) = v {
                self.signature_into(&utf8_text(b), s, row);
            }
        });
        out
    }
}

/// `bounds` = 0, then one past each space of `t`, then `t.len() + 1`: the start of every token of
/// a normalised text (single ASCII spaces between words) and one past its end.
///
/// A branch-free byte scan: every position is written and kept by how far the end moves. Words
/// are ~6 bytes, so `match_indices(' ')` (a memchr call per word) was 10 % of a W3 MinHash run,
/// and a filtered scan mispredicted at every word edge.
fn word_bounds(t: &str, bounds: &mut Vec<usize>) {
    bounds.clear();
    bounds.reserve(t.len() + 2);
    let base = bounds.as_mut_ptr();
    // SAFETY: at most one entry per byte plus the first and the last, all inside the capacity
    // reserved above; entries 0..n are written before `set_len(n)`.
    unsafe {
        *base = 0;
        let mut n = 1;
        for (i, &b) in t.as_bytes().iter().enumerate() {
            *base.add(n) = i + 1;
            n += usize::from(b == b' ');
        }
        *base.add(n) = t.len() + 1;
        bounds.set_len(n + 1);
    }
}

/// The normalised text shingles are cut from (`alnum` normalisation).
pub fn shingle_text(text: &str, tmp: &mut String, out: &mut String) {
    normalize_into(text, Normalize::Alnum, tmp, out);
}

/// Fraction of equal positions: the MinHash estimate of Jaccard similarity.
pub fn jaccard_estimate(x: &[u32], y: &[u32]) -> f64 {
    let eq = x.iter().zip(y).filter(|(a, b)| a == b).count();
    eq as f64 / x.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn words(n: usize, offset: usize) -> String {
        (offset..offset + n)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn shingling_rules() {
        let m = MinHasher::new(4, 2, Tokenizer::Word, 1).unwrap();
        let mut s = Scratch::default();
        let got = m.shingle_hashes("The  cat, sat!", &mut s).to_vec();
        let want: Vec<u32> = ["the cat", "cat sat"]
            .iter()
            .map(|t| xxh3_64(t.as_bytes()) as u32)
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            m.shingle_hashes("Solo!", &mut s),
            &[xxh3_64(b"solo") as u32]
        );
        assert!(m.shingle_hashes(" ?! ", &mut s).is_empty());
        let c = MinHasher::new(4, 3, Tokenizer::Char, 1).unwrap();
        let want: Vec<u32> = ["héé", "éé ", "é x"]
            .iter()
            .map(|t| xxh3_64(t.as_bytes()) as u32)
            .collect();
        assert_eq!(c.shingle_hashes("HÉÉ x", &mut s), want.as_slice());
        assert_eq!(m.signature(""), vec![u32::MAX; 4]);
    }

    #[test]
    fn word_bounds_are_token_starts() {
        let mut b = vec![7];
        for (t, want) in [
            ("", vec![0, 1]),
            ("a", vec![0, 2]),
            ("ab cd e", vec![0, 3, 6, 8]),
            ("x y", vec![0, 2, 4]),
        ] {
            word_bounds(t, &mut b);
            assert_eq!(b, want, "{t:?}");
        }
    }

    #[test]
    fn estimates_jaccard() {
        let m = MinHasher::new(256, 1, Tokenizer::Word, 7).unwrap();
        // Sets of 200 tokens overlapping in 100: J = 100 / 300.
        let (x, y) = (m.signature(&words(200, 0)), m.signature(&words(200, 100)));
        let est = jaccard_estimate(&x, &y);
        assert!((est - 1.0 / 3.0).abs() < 0.1, "{est}");
        assert_eq!(jaccard_estimate(&x, &x), 1.0);
    }

    #[test]
    fn bad_params() {
        assert!(MinHasher::new(0, 5, Tokenizer::Word, 1).is_err());
        assert!(MinHasher::new(8, 0, Tokenizer::Word, 1).is_err());
        assert!("byte".parse::<Tokenizer>().is_err());
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(200))]
        #[test]
        fn fuzz_never_panics(t in any::<String>(), n in 1usize..8) {
            for tok in [Tokenizer::Word, Tokenizer::Char] {
                let m = MinHasher::new(16, n, tok, 1).unwrap();
                prop_assert_eq!(m.signature(&t).len(), 16);
            }
        }
    }
}
