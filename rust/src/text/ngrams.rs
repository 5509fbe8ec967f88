//! The n-gram bookkeeping of Gopher's repetition rules: the most frequent space-joined n-gram (DataTrove's
//! `find_top_duplicate`) and the characters of repeated separator-less n-grams (`find_all_duplicate`).

use std::collections::HashMap;

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

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
pub(super) fn top_ngram_chars(wid: &[u32], wlen: &[usize], n: usize) -> usize {
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
pub(super) struct ConcatHashes {
    prefix: Vec<u64>,  // hash of bytes before word i
    pow: Vec<u64>,     // BASE^(bytes before word i)
    inv_pow: Vec<u64>, // BASE^-(bytes before word i)
    bytes: Vec<usize>, // bytes before word i
}

impl ConcatHashes {
    pub(super) fn new(words: &[&str]) -> Self {
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
pub(super) fn all_duplicate_chars(words: &[&str], wlen: &[usize], n: usize) -> usize {
    all_duplicate_chars_with(&ConcatHashes::new(words), words.len(), wlen, n)
}

pub(super) fn all_duplicate_chars_with(
    h: &ConcatHashes,
    n_words: usize,
    wlen: &[usize],
    n: usize,
) -> usize {
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
