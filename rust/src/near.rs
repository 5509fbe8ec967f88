//! `NearIndex`: the state of a Hamming-distance near-duplicate search by multi-index hashing.
//!
//! A 64-bit hash (e.g. a perceptual image hash) is split into `d + 1` blocks; two hashes within Hamming
//! distance `d` agree exactly on at least one block (pigeonhole). Each block gives a *key*; the index maps
//! a key to the `(hash, position)` entries that had it, in insertion order. A query for one key scans that
//! key's entries and keeps those within distance `d` of the query hash (a popcount each).
//!
//! `query_insert` is one call for a batch of keys (several per row, row-major, as the caller routes them):
//! for each key it returns the smallest position of an *earlier* entry within distance, then inserts the
//! key's own entry. It is idempotent per position: a position already present under a key (a batch retried
//! after a crash) is not inserted twice, and only entries inserted *before* it are candidates, so a retry is
//! answered as the first attempt was even if later rows have been inserted since.
//!
//! Cost: a key's list holds every row whose block had that value, so with short blocks (`64 / (d + 1)`
//! bits) lists grow like `n / 2^bits`; that is multi-index hashing's known trade-off, fine for tens of
//! millions of hashes per bucket at `d <= 8`, and the reason the service shards keys over buckets.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::error::{KResult, KernelError};

/// Keys arrive already mixed (block index and bits through a bijective mixer), so hashing them again
/// only costs time.
#[derive(Default)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

type Map = HashMap<u64, Vec<(u64, u64)>, BuildHasherDefault<IdentityHasher>>;

/// No match: the value `query_insert` returns for a key without an earlier entry within distance.
pub const NO_MATCH: u64 = u64::MAX;
const MAGIC: &[u8; 8] = b"MDFNEAR\0";

#[derive(Default)]
pub struct NearIndex {
    map: Map,
    entries: usize,
}

impl NearIndex {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Approximate heap bytes: entries (16 each, with Vec slack) plus the map's buckets.
    pub fn memory_bytes(&self) -> usize {
        let lists: usize = self.map.values().map(|v| v.capacity() * 16).sum();
        lists + self.map.capacity() * (8 + 24 + 1)
    }

    /// For every `i`: the smallest position among entries of `keys[i]` inserted before `positions[i]`'s
    /// own entry (or all, if it has none) whose hash is within `max_distance` of `hashes[i]`; then insert
    /// `(hashes[i], positions[i])` under `keys[i]` unless already there.
    ///
    /// `stride` lets one row own several entries (several hashes of one image, positions
    /// `row * stride + c`): entries of the same row (`position / stride` equal) never match each other.
    pub fn query_insert(
        &mut self,
        keys: &[u64],
        hashes: &[u64],
        positions: &[u64],
        max_distance: u32,
        stride: u64,
    ) -> KResult<Vec<u64>> {
        if stride == 0 {
            return Err(KernelError::value("stride must be >= 1".to_owned()));
        }
        if keys.len() != hashes.len() || keys.len() != positions.len() {
            return Err(KernelError::value(format!(
                "keys, hashes and positions must have the same length, got {}, {} and {}",
                keys.len(),
                hashes.len(),
                positions.len()
            )));
        }
        let mut out = Vec::with_capacity(keys.len());
        for ((&key, &hash), &pos) in keys.iter().zip(hashes).zip(positions) {
            let list = self.map.entry(key).or_default();
            let own = list.iter().position(|e| e.1 == pos);
            let earlier = &list[..own.unwrap_or(list.len())];
            let row = pos / stride;
            let best = earlier
                .iter()
                .filter(|e| e.1 / stride != row && (e.0 ^ hash).count_ones() <= max_distance)
                .map(|e| e.1)
                .min()
                .unwrap_or(NO_MATCH);
            if own.is_none() {
                list.push((hash, pos));
                self.entries += 1;
            }
            out.push(best);
        }
        Ok(out)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.entries * 16 + self.map.len() * 16);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.map.len() as u64).to_le_bytes());
        for (key, list) in &self.map {
            out.extend_from_slice(&key.to_le_bytes());
            out.extend_from_slice(&(list.len() as u64).to_le_bytes());
            for (h, p) in list {
                out.extend_from_slice(&h.to_le_bytes());
                out.extend_from_slice(&p.to_le_bytes());
            }
        }
        out
    }

    pub fn from_bytes(data: &[u8]) -> KResult<Self> {
        let bad =
            || KernelError::value("not a NearIndex snapshot (bad magic or truncated)".to_owned());
        let mut r = Reader { data, at: 0 };
        if r.take(8).ok_or_else(bad)? != MAGIC {
            return Err(bad());
        }
        let n = r.u64().ok_or_else(bad)? as usize;
        let mut index = Self::new();
        for _ in 0..n {
            let key = r.u64().ok_or_else(bad)?;
            let len = r.u64().ok_or_else(bad)? as usize;
            let mut list = Vec::with_capacity(len.min(data.len() / 16));
            for _ in 0..len {
                list.push((r.u64().ok_or_else(bad)?, r.u64().ok_or_else(bad)?));
            }
            index.entries += list.len();
            index.map.insert(key, list);
        }
        if r.at != data.len() {
            return Err(bad());
        }
        Ok(index)
    }
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.data.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn earlier_entry_within_distance_matches_and_the_smallest_position_wins() {
        let mut ix = NearIndex::new();
        assert_eq!(
            ix.query_insert(&[7], &[0b1111], &[30], 2, 1).unwrap(),
            vec![NO_MATCH]
        );
        assert_eq!(
            ix.query_insert(&[7], &[0b0111], &[10], 2, 1).unwrap(),
            vec![30]
        );
        assert_eq!(
            ix.query_insert(&[7], &[0b0011], &[50], 2, 1).unwrap(),
            vec![10]
        );
        assert_eq!(
            ix.query_insert(&[7], &[!0], &[60], 2, 1).unwrap(),
            vec![NO_MATCH]
        );
        assert_eq!(
            ix.query_insert(&[8], &[0b1111], &[70], 2, 1).unwrap(),
            vec![NO_MATCH]
        );
        assert_eq!(ix.len(), 5);
    }

    #[test]
    fn a_retried_position_sees_only_entries_inserted_before_it() {
        let mut ix = NearIndex::new();
        assert_eq!(
            ix.query_insert(&[1, 1], &[5, 5], &[100, 200], 0, 1)
                .unwrap(),
            vec![NO_MATCH, 100]
        );
        // 100 retried: 200 came later, so 100 is still new, and it is not inserted twice
        assert_eq!(
            ix.query_insert(&[1], &[5], &[100], 0, 1).unwrap(),
            vec![NO_MATCH]
        );
        assert_eq!(
            ix.query_insert(&[1], &[5], &[200], 0, 1).unwrap(),
            vec![100]
        );
        assert_eq!(ix.len(), 2);
    }

    #[test]
    fn entries_of_one_row_never_match_each_other() {
        let mut ix = NearIndex::new();
        // row 5 owns positions 10 and 11 (stride 2); their hashes are equal
        assert_eq!(
            ix.query_insert(&[1, 1], &[9, 9], &[10, 11], 0, 2).unwrap(),
            vec![NO_MATCH, NO_MATCH]
        );
        assert_eq!(ix.query_insert(&[1], &[9], &[13], 0, 2).unwrap(), vec![10]);
        assert!(ix.query_insert(&[1], &[9], &[14], 0, 0).is_err());
    }

    #[test]
    fn snapshot_round_trip_and_bad_input() {
        let mut ix = NearIndex::new();
        ix.query_insert(&[1, 2, 1], &[3, 4, 5], &[6, 7, 8], 1, 1)
            .unwrap();
        let back = NearIndex::from_bytes(&ix.to_bytes()).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back.to_bytes().len(), ix.to_bytes().len());
        assert!(NearIndex::from_bytes(b"nonsense").is_err());
        let bytes = ix.to_bytes();
        assert!(NearIndex::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        assert!(ix.query_insert(&[1], &[], &[], 0, 1).is_err());
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(64))]
        #[test]
        fn matches_a_brute_force_scan(rows in proptest::collection::vec((0u64..4, any::<u64>(), 0u32..64), 1..60)) {
            let mut ix = NearIndex::new();
            let mut seen: Vec<(u64, u64, u64)> = Vec::new();
            for (i, (key, hash, flips)) in rows.iter().enumerate() {
                let hash = if i > 0 && flips % 2 == 0 { seen[i - 1].1 ^ (1 << (flips % 64)) } else { *hash };
                let got = ix.query_insert(&[*key], &[hash], &[i as u64], 3, 1).unwrap()[0];
                let want = seen.iter().filter(|e| e.0 == *key && (e.1 ^ hash).count_ones() <= 3)
                    .map(|e| e.2).min().unwrap_or(NO_MATCH);
                prop_assert_eq!(got, want);
                seen.push((*key, hash, i as u64));
            }
        }
    }
}
