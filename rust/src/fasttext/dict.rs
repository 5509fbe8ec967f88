//! fastText's dictionary and how a line becomes feature ids (`Dictionary::getLine` for supervised models):
//! whitespace tokens as `readWord` splits them (a newline is the end-of-sentence token `</s>`, which also ends
//! the line), each known word's id, the character n-grams of `<word>` (`minn..=maxn` code points) hashed into
//! `bucket` rows, and word n-grams up to `wordNgrams` hashed the same way; a quantized model with a cut-off
//! keeps only the hashed rows its `pruneidx` maps.

use std::collections::HashMap;

use super::read::Reader;
use crate::error::{KResult, KernelError};

pub const EOS: &[u8] = b"</s>";
const LABEL_PREFIX: &[u8] = b"__label__";
const FNV_OFFSET: u32 = 2_166_136_261;
const FNV_PRIME: u32 = 16_777_619;

/// fastText's string hash: FNV-1a over the bytes, each sign-extended from `int8_t` first (so bytes >= 0x80
/// hash differently from plain FNV-1a).
#[inline]
pub fn hash_step(h: u32, b: u8) -> u32 {
    (h ^ (b as i8 as i32 as u32)).wrapping_mul(FNV_PRIME)
}

pub fn hash(bytes: &[u8]) -> u32 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| hash_step(h, b))
}

/// The separators of `readWord`.
#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c | 0)
}

/// The next token of `text` from `*pos` (`readWord`): a run of non-separators, or `</s>` for a newline met
/// before any; `None` at the end.
pub fn read_word<'a>(text: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    while *pos < text.len() && is_space(text[*pos]) {
        *pos += 1;
        if text[*pos - 1] == b'\n' {
            return Some(EOS);
        }
    }
    let start = *pos;
    while *pos < text.len() && !is_space(text[*pos]) {
        *pos += 1;
    }
    // a newline after a word is left for the next call, which returns it as `</s>`
    (*pos > start).then(|| &text[start..*pos])
}

/// The next token of `text` from `*pos` with every separator a space (a newline too); `None` at the
/// end.
fn read_word_in_line<'a>(text: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    while *pos < text.len() && is_space(text[*pos]) {
        *pos += 1;
    }
    let start = *pos;
    while *pos < text.len() && !is_space(text[*pos]) {
        *pos += 1;
    }
    (*pos > start).then(|| &text[start..*pos])
}

/// Settings of the dictionary's hashing (from the model's arguments).
#[derive(Debug, Clone, Copy)]
pub struct Hashing {
    pub minn: i32,
    pub maxn: i32,
    pub bucket: i32,
    pub word_ngrams: i32,
}

#[derive(Debug)]
pub struct Dictionary {
    words: Vec<u8>,
    ends: Vec<usize>,
    labels: Vec<bool>,
    pub counts: Vec<i64>,
    pub nwords: usize,
    pub nlabels: usize,
    /// `-1` not pruned, `0` no hashed rows at all, `> 0` only those in `prune`.
    prune_size: i64,
    prune: HashMap<i32, i32>,
    /// Open addressing on fastText's hash (ids, `-1` empty); a power of two at most half full.
    table: Vec<i32>,
    hashing: Hashing,
}

pub struct Scratch {
    pub hashes: Vec<i32>,
    pub word: Vec<u8>,
}

impl Dictionary {
    /// `Dictionary::load`: int32 size, nwords, nlabels, int64 ntokens, pruneidx size, the entries
    /// (`word\0`, int64 count, int8 type), then the pruneidx pairs.
    pub fn load(r: &mut Reader<'_>, hashing: Hashing) -> KResult<Self> {
        let (size, nwords, nlabels) = (r.i32()?, r.i32()?, r.i32()?);
        let (_ntokens, prune_size) = (r.i64()?, r.i64()?);
        if size < 0 || nwords < 0 || nlabels < 0 || nwords.checked_add(nlabels) != Some(size) {
            return Err(KernelError::value(format!(
                "damaged model file: dictionary of {size} entries for {nwords} words and {nlabels} labels"
            )));
        }
        // an entry is at least its NUL, an int64 count and an int8 type; a pruneidx pair two int32
        let size = r.fits(size as u64, 10, "dictionary entries")?;
        let (mut words, mut ends) = (Vec::new(), Vec::with_capacity(size));
        let (mut labels, mut counts) = (Vec::with_capacity(size), Vec::new());
        for _ in 0..size {
            words.extend_from_slice(r.cstr()?);
            ends.push(words.len());
            let count = r.i64()?;
            let is_label = r.u8()? == 1;
            if is_label {
                counts.push(count);
            }
            labels.push(is_label);
        }
        let pairs = r.fits(prune_size.max(0) as u64, 8, "pruneidx pairs")?;
        let mut prune = HashMap::with_capacity(pairs);
        for _ in 0..pairs {
            let (from, to) = (r.i32()?, r.i32()?);
            prune.insert(from, to);
        }
        let mut d = Self {
            words,
            ends,
            labels,
            counts,
            nwords: nwords as usize,
            nlabels: nlabels as usize,
            prune_size,
            prune,
            table: vec![-1; (size * 2).next_power_of_two().max(2)],
            hashing,
        };
        for id in 0..size {
            let slot = d.slot(d.word(id), hash(d.word(id)));
            d.table[slot] = id as i32;
        }
        Ok(d)
    }

    pub fn size(&self) -> usize {
        self.ends.len()
    }

    pub fn word(&self, id: usize) -> &[u8] {
        let start = if id == 0 { 0 } else { self.ends[id - 1] };
        &self.words[start..self.ends[id]]
    }

    /// The label names, in label-index order (`getLabel(i)` is entry `nwords + i`).
    pub fn label_names(&self) -> impl Iterator<Item = &[u8]> {
        (self.nwords..self.size()).map(|i| self.word(i))
    }

    pub fn is_pruned(&self) -> bool {
        self.prune_size >= 0
    }

    /// Values `pruneidx` maps hashed rows to (for checking them against the input matrix).
    pub fn pruned_rows(&self) -> impl Iterator<Item = i32> + '_ {
        self.prune.values().copied()
    }

    fn slot(&self, w: &[u8], h: u32) -> usize {
        let mask = self.table.len() - 1;
        let mut i = h as usize & mask;
        while self.table[i] >= 0 && self.word(self.table[i] as usize) != w {
            i = (i + 1) & mask;
        }
        i
    }

    fn id(&self, w: &[u8], h: u32) -> i32 {
        self.table[self.slot(w, h)]
    }

    /// `pushHash`: hashed row `id` as a feature, through `pruneidx` when the model was pruned.
    #[inline]
    fn push_hash(&self, out: &mut Vec<i32>, id: i32) {
        if self.prune_size == 0 || id < 0 {
            return;
        }
        let id = if self.prune_size > 0 {
            match self.prune.get(&id) {
                Some(&to) => to,
                None => return,
            }
        } else {
            id
        };
        out.push(self.nwords as i32 + id);
    }

    /// `computeSubwords` of `word` (already wrapped in `<` `>`): every n-gram of `minn..=maxn` code points
    /// except the lone `<` and `>`, hashed into `bucket` rows.
    fn subwords(&self, word: &[u8], out: &mut Vec<i32>) {
        let Hashing {
            minn, maxn, bucket, ..
        } = self.hashing;
        if bucket <= 0 {
            return;
        }
        let cont = |b: u8| b & 0xC0 == 0x80;
        for i in 0..word.len() {
            if cont(word[i]) {
                continue;
            }
            let (mut j, mut n, mut h) = (i, 1, FNV_OFFSET);
            while j < word.len() && n <= maxn {
                h = hash_step(h, word[j]);
                j += 1;
                while j < word.len() && cont(word[j]) {
                    h = hash_step(h, word[j]);
                    j += 1;
                }
                if n >= minn && !(n == 1 && (i == 0 || j == word.len())) {
                    self.push_hash(out, (h % bucket as u32) as i32);
                }
                n += 1;
            }
        }
    }

    /// `addSubwords`: a known word's id (and its n-grams when `maxn > 0`), an unknown word's n-grams.
    fn add_word(&self, out: &mut Vec<i32>, token: &[u8], wid: i32, buf: &mut Vec<u8>) {
        if wid >= 0 {
            out.push(wid);
            if self.hashing.maxn <= 0 || token == EOS {
                return;
            }
        } else if token == EOS {
            return;
        }
        buf.clear();
        buf.push(b'<');
        buf.extend_from_slice(token);
        buf.push(b'>');
        self.subwords(buf, out);
    }

    /// `getLine` for a supervised model: the feature ids of `text` up to and including its first `</s>`.
    /// Tokens that look like labels (`__label__...`) are not features.
    ///
    /// With `whole`, `text` is read as the one line it would be with every newline replaced by a space
    /// and `"\n"` appended (what a classifier's callers prepare), without making that copy: a newline
    /// separates words like a space, and `</s>` comes at the end of the text.
    pub fn line(&self, text: &[u8], out: &mut Vec<i32>, s: &mut Scratch, whole: bool) {
        out.clear();
        s.hashes.clear();
        let mut pos = 0;
        let next = |pos: &mut usize| {
            if whole {
                Some(read_word_in_line(text, pos).unwrap_or(EOS))
            } else {
                read_word(text, pos)
            }
        };
        while let Some(token) = next(&mut pos) {
            let h = hash(token);
            let wid = self.id(token, h);
            let is_label = if wid < 0 {
                token.starts_with(LABEL_PREFIX)
            } else {
                self.labels[wid as usize]
            };
            if !is_label {
                self.add_word(out, token, wid, &mut s.word);
                s.hashes.push(h as i32);
            }
            if token == EOS {
                break;
            }
        }
        self.word_ngrams(out, &s.hashes);
    }

    /// `addWordNgrams`: each run of 2..=wordNgrams token hashes, combined as fastText does (the int32
    /// hashes widened with sign extension to uint64).
    fn word_ngrams(&self, out: &mut Vec<i32>, hashes: &[i32]) {
        let Hashing {
            bucket,
            word_ngrams: n,
            ..
        } = self.hashing;
        if bucket <= 0 || n <= 1 {
            return;
        }
        for i in 0..hashes.len() {
            let mut h = hashes[i] as i64 as u64;
            for &next in hashes.iter().take(i + n as usize).skip(i + 1) {
                h = h.wrapping_mul(116_049_371).wrapping_add(next as i64 as u64);
                self.push_hash(out, (h % bucket as u64) as i32);
            }
        }
    }
}

#[cfg(test)]
#[path = "dict_tests.rs"]
mod tests;
