//! The byte-level BPE model of a `tokenizer.json` (GPT-2's bytes-to-characters table, the vocabulary's byte ids,
//! the ranked merges) and the crate's merge loop, for `tokens_fast`.
//!
//! [`Bpe::merge`] is the `tokenizers` crate's `Word::merge_all` step for step (a min-heap on rank then position,
//! stale entries skipped by the same test), so the ids and the crate's quirks are the same.

use ahash::AHashMap;
use serde_json::Value;

/// The bytes-to-characters table of GPT-2's byte-level scheme (`bytes_to_unicode`).
pub(crate) fn byte_chars() -> [char; 256] {
    let mut bs: Vec<u32> = (u32::from(b'!')..=u32::from(b'~')).collect();
    bs.extend(0xA1..=0xAC);
    bs.extend(0xAE..=0xFF);
    let mut out = ['\0'; 256];
    for &b in &bs {
        out[b as usize] = char::from_u32(b).expect("a Latin-1 code point");
    }
    let mut n = 0;
    for b in 0..256u32 {
        if !bs.contains(&b) {
            out[b as usize] = char::from_u32(256 + n).expect("a code point below 512");
            n += 1;
        }
    }
    out
}

/// The BPE model of the file: every byte's id, the merges, and (with `ignore_merges`) whole tokens by bytes.
pub(crate) struct Bpe {
    byte_ids: [u32; 256],
    merges: AHashMap<(u32, u32), (u32, u32)>,
    whole: Option<AHashMap<Box<[u8]>, u32>>,
}

#[derive(Clone, Copy)]
struct Symbol {
    c: u32,
    prev: isize,
    next: isize,
    live: bool,
}

#[derive(PartialEq, Eq)]
struct Merge {
    pos: usize,
    rank: u32,
    new_id: u32,
}

impl Ord for Merge {
    /// A max-heap of this order pops the lowest rank first, then the lowest position (the crate's order).
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.rank.cmp(&self.rank).then(other.pos.cmp(&self.pos))
    }
}

impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Bpe {
    /// The ids of one piece's bytes.
    pub(crate) fn merge(&self, bytes: &[u8], out: &mut Vec<u32>) {
        if let Some(id) = self.whole.as_ref().and_then(|w| w.get(bytes)) {
            out.push(*id);
            return;
        }
        let n = bytes.len();
        let mut symbols: Vec<Symbol> = (0..n)
            .map(|i| Symbol {
                c: self.byte_ids[bytes[i] as usize],
                prev: i as isize - 1,
                next: if i + 1 < n { i as isize + 1 } else { -1 },
                live: true,
            })
            .collect();
        let mut queue = std::collections::BinaryHeap::with_capacity(n);
        for i in 0..n.saturating_sub(1) {
            if let Some(&(rank, new_id)) = self.merges.get(&(symbols[i].c, symbols[i + 1].c)) {
                queue.push(Merge {
                    pos: i,
                    rank,
                    new_id,
                });
            }
        }
        while let Some(top) = queue.pop() {
            let cur = symbols[top.pos];
            if !cur.live || cur.next == -1 {
                continue;
            }
            let next_pos = cur.next as usize;
            let right = symbols[next_pos];
            match self.merges.get(&(cur.c, right.c)) {
                Some(&(_, new_id)) if new_id == top.new_id => {}
                _ => continue, // an expired entry
            }
            symbols[top.pos].c = top.new_id;
            symbols[top.pos].next = right.next;
            symbols[next_pos].live = false;
            if right.next > -1 && (right.next as usize) < n {
                symbols[right.next as usize].prev = top.pos as isize;
            }
            let current = symbols[top.pos];
            if current.prev >= 0 {
                let prev = symbols[current.prev as usize];
                if let Some(&(rank, new_id)) = self.merges.get(&(prev.c, current.c)) {
                    let pos = current.prev as usize;
                    queue.push(Merge { pos, rank, new_id });
                }
            }
            let next = current.next;
            if next >= 0 && (next as usize) < n {
                let right = symbols[next as usize];
                if let Some(&(rank, new_id)) = self.merges.get(&(current.c, right.c)) {
                    queue.push(Merge {
                        pos: top.pos,
                        rank,
                        new_id,
                    });
                }
            }
        }
        out.extend(symbols.iter().filter(|s| s.live).map(|s| s.c));
    }
}

/// The model's vocabulary, merges (ranked as the crate ranks them) and, with `ignore_merges`, whole tokens.
pub(crate) fn bpe(model: &Value) -> Option<Bpe> {
    let vocab: AHashMap<&str, u32> = model
        .get("vocab")?
        .as_object()?
        .iter()
        .map(|(k, v)| Some((k.as_str(), u32::try_from(v.as_u64()?).ok()?)))
        .collect::<Option<_>>()?;
    let chars = byte_chars();
    let mut byte_ids = [0u32; 256];
    let mut buf = [0u8; 4];
    for (b, c) in chars.iter().enumerate() {
        byte_ids[b] = *vocab.get(&*c.encode_utf8(&mut buf))?; // a byte without an id: the crate's unk rules
    }
    let pairs: Vec<(String, String)> = match model.get("merges")?.as_array()? {
        merges if merges.iter().all(Value::is_string) => merges
            .iter()
            .filter_map(Value::as_str)
            .filter(|l| !l.starts_with("#version"))
            .map(|l| {
                let mut parts = l.split(' ');
                let (a, b) = (parts.next()?, parts.next()?);
                parts.next().is_none().then(|| (a.to_owned(), b.to_owned()))
            })
            .collect::<Option<_>>()?,
        merges => merges
            .iter()
            .map(|m| {
                let m = m.as_array()?;
                Some((
                    m.first()?.as_str()?.to_owned(),
                    m.get(1)?.as_str()?.to_owned(),
                ))
            })
            .collect::<Option<_>>()?,
    };
    let mut merges = AHashMap::with_capacity(pairs.len());
    for (rank, (a, b)) in pairs.iter().enumerate() {
        let key = (*vocab.get(a.as_str())?, *vocab.get(b.as_str())?);
        let new_id = *vocab.get(format!("{a}{b}").as_str())?;
        merges.insert(key, (u32::try_from(rank).ok()?, new_id)); // a pair listed twice: the last wins, as there
    }
    let ignore_merges = model
        .get("ignore_merges")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let whole = ignore_merges.then(|| {
        let byte_of: AHashMap<char, u8> = chars
            .iter()
            .enumerate()
            .map(|(b, c)| (*c, b as u8))
            .collect();
        vocab
            .iter()
            .filter_map(|(token, id)| {
                let bytes: Option<Vec<u8>> =
                    token.chars().map(|c| byte_of.get(&c).copied()).collect();
                Some((bytes?.into_boxed_slice(), *id))
            })
            .collect()
    });
    Some(Bpe {
        byte_ids,
        merges,
        whole,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crate's own table, spot-checked: printable ASCII maps to itself, space to U+0120 (`Ġ`), newline to
    /// U+010A (`Ċ`), 0xAD to U+0143.
    #[test]
    fn byte_chars_is_gpt2s_table() {
        let t = byte_chars();
        assert_eq!(
            (t[b'a' as usize], t[b' ' as usize], t[b'\n' as usize]),
            ('a', 'Ġ', 'Ċ')
        );
        assert_eq!(t[0xAD], '\u{143}');
        let mut all: Vec<char> = t.to_vec();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 256);
    }

    fn bpe(merges: &[(u32, u32, u32)]) -> Bpe {
        let mut byte_ids = [0u32; 256];
        for (b, id) in byte_ids.iter_mut().enumerate() {
            *id = b as u32;
        }
        Bpe {
            byte_ids,
            merges: merges
                .iter()
                .enumerate()
                .map(|(r, &(a, b, n))| ((a, b), (r as u32, n)))
                .collect(),
            whole: None,
        }
    }

    /// Lowest rank first, leftmost among equal ranks ("aaa" with a+a: [aa, a]), merges that build on merges.
    #[test]
    fn merges_go_by_rank_then_position() {
        let a = u32::from(b'a');
        let b = u32::from(b'b');
        let m = bpe(&[(a, a, 300), (300, b, 301), (a, b, 302)]);
        let mut out = Vec::new();
        m.merge(b"aaa", &mut out);
        assert_eq!(out, vec![300, a]);
        out.clear();
        m.merge(b"aab", &mut out);
        assert_eq!(out, vec![301]);
        out.clear();
        m.merge(b"bab", &mut out);
        assert_eq!(out, vec![b, 302]);
    }
}
