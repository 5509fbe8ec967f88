//! `KeySet`: an insert-only hash set of 64- or 128-bit keys (usually content hashes) used to
//! drop rows already seen. Open addressing with linear probing over a flat `Vec<K>`:
//! 8 (or 16) bytes a slot, load factor kept in (3/8, 3/4], so 10.7–21.3 bytes a 64-bit key.
//! The zero key marks empty slots and is tracked by a flag. Batch calls (and rehashing) prefetch
//! the home slot of a key a few iterations ahead, which hides most cache misses on large sets.

use crate::error::{KResult, KernelError};

/// A fixed-width key. `0` is reserved internally as the empty marker (zero keys still work).
pub trait Key: Copy + Eq + Default + Send + Sync + 'static {
    const BYTES: usize;
    fn hash(self) -> u64;
    fn write_le(self, out: &mut Vec<u8>);
    fn read_le(b: &[u8]) -> Self;
}

#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

const K1: u64 = 0x9E37_79B9_7F4A_7C15;
const K2: u64 = 0xD6E8_FEB8_6659_FD93;

impl Key for u64 {
    const BYTES: usize = 8;
    #[inline]
    fn hash(self) -> u64 {
        fold_mul(self ^ K1, K2)
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn read_le(b: &[u8]) -> Self {
        u64::from_le_bytes(b.try_into().expect("8 bytes"))
    }
}

impl Key for u128 {
    const BYTES: usize = 16;
    #[inline]
    fn hash(self) -> u64 {
        fold_mul((self as u64) ^ K1, ((self >> 64) as u64) ^ K2)
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn read_le(b: &[u8]) -> Self {
        u128::from_le_bytes(b.try_into().expect("16 bytes"))
    }
}

const MIN_SLOTS: usize = 16;
const PREFETCH_AHEAD: usize = 16;
const MAGIC: &[u8; 8] = b"MDFKSET\0";
const FORMAT_VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 4 + 8;

#[derive(Debug, Clone)]
pub struct KeyTable<K: Key> {
    slots: Vec<K>,
    len: usize,
    has_zero: bool,
}

#[inline]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint; it never faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p.cast::<i8>(), core::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Write a zero byte into every page of a zeroed slot array before the table reads it.
///
/// A large `vec![0; n]` is fresh `mmap` memory. The probes read a page first, which maps the
/// kernel's shared zero page; the first insert into it then faults again to copy it, and that
/// fault flushes the TLB of every CPU running the process (`do_wp_page`, 2-3 % of a W3 MinHash
/// run in `perf`). A write first maps a zeroed page of its own at once. On memory the allocator
/// reused (already zeroed by `calloc`) it is one store a page.
fn touch_for_write<K: Key>(slots: &mut [K]) {
    const PAGE: usize = 4096;
    let bytes = std::mem::size_of_val(slots);
    let p = slots.as_mut_ptr().cast::<u8>();
    for off in (0..bytes).step_by(PAGE) {
        // SAFETY: `off < bytes`, inside the slice; every key type's default (the empty slot)
        // is all zero bytes, so the slot's value does not change. Volatile: the store must
        // happen although it writes what the allocator promised is there.
        unsafe { std::ptr::write_volatile(p.add(off), 0) };
    }
}

impl<K: Key> Default for KeyTable<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Key> KeyTable<K> {
    pub fn new() -> Self {
        Self {
            slots: Vec::new(),
            len: 0,
            has_zero: false,
        }
    }

    /// A table that holds `n` keys without growing (`n == 0`: allocate on first insert).
    pub fn with_capacity(n: usize) -> Self {
        let mut t = Self::new();
        if n > 0 {
            t.grow_to(Self::slots_for(n));
        }
        t
    }

    fn slots_for(n: usize) -> usize {
        (n.saturating_mul(4) / 3 + 1)
            .next_power_of_two()
            .max(MIN_SLOTS)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held by the table (slot array plus the struct).
    pub fn memory_bytes(&self) -> usize {
        self.slots.capacity() * K::BYTES + std::mem::size_of::<Self>()
    }

    #[inline]
    fn home(&self, k: K) -> usize {
        k.hash() as usize & (self.slots.len() - 1)
    }

    fn grow_to(&mut self, n_slots: usize) {
        debug_assert!(n_slots.is_power_of_two());
        let mut slots = vec![K::default(); n_slots];
        touch_for_write(&mut slots);
        let old = std::mem::replace(&mut self.slots, slots);
        let mask = n_slots - 1;
        for (j, &k) in old.iter().enumerate() {
            if let Some(&ahead) = old.get(j + PREFETCH_AHEAD) {
                self.prefetch_key(ahead);
            }
            if k == K::default() {
                continue;
            }
            let mut i = self.home(k);
            while self.slots[i] != K::default() {
                i = (i + 1) & mask;
            }
            self.slots[i] = k;
        }
    }

    /// Insert `k`; true when it was not present.
    #[inline]
    pub fn insert(&mut self, k: K) -> bool {
        if k == K::default() {
            let new = !self.has_zero;
            self.has_zero = true;
            self.len += usize::from(new);
            return new;
        }
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow_to((self.slots.len() * 2).max(MIN_SLOTS));
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(k);
        loop {
            let s = self.slots[i];
            if s == k {
                return false;
            }
            if s == K::default() {
                self.slots[i] = k;
                self.len += 1;
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    pub fn contains(&self, k: K) -> bool {
        if k == K::default() {
            return self.has_zero;
        }
        if self.slots.is_empty() {
            return false;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(k);
        loop {
            let s = self.slots[i];
            if s == k {
                return true;
            }
            if s == K::default() {
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    fn prefetch_key(&self, k: K) {
        if !self.slots.is_empty() {
            prefetch(&self.slots[self.home(k)]);
        }
    }

    /// Insert each key where `valid(i)`; returns per-key "was new" (false for invalid rows).
    /// A key repeated inside `keys` is new only at its first occurrence.
    pub fn insert_many(&mut self, keys: &[K], valid: impl Fn(usize) -> bool) -> Vec<bool> {
        let mut out = Vec::with_capacity(keys.len());
        for i in 0..keys.len() {
            if let Some(&ahead) = keys.get(i + PREFETCH_AHEAD) {
                self.prefetch_key(ahead);
            }
            out.push(valid(i) && self.insert(keys[i]));
        }
        out
    }

    /// Membership of each key (read-only, parallel on the current rayon pool).
    pub fn contains_many(&self, keys: &[K]) -> Vec<bool> {
        use rayon::prelude::*;
        let mut out = vec![false; keys.len()];
        out.par_chunks_mut(4096)
            .zip(keys.par_chunks(4096))
            .for_each(|(o, ks)| {
                for (i, (o, &k)) in o.iter_mut().zip(ks).enumerate() {
                    if let Some(&ahead) = ks.get(i + PREFETCH_AHEAD) {
                        self.prefetch_key(ahead);
                    }
                    *o = self.contains(k);
                }
            });
        out
    }

    /// Snapshot: magic, format version, key width, count, then the keys little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER + self.len * K::BYTES);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(K::BYTES as u32).to_le_bytes());
        out.extend_from_slice(&(self.len as u64).to_le_bytes());
        if self.has_zero {
            K::default().write_le(&mut out);
        }
        for &k in self.slots.iter().filter(|&&k| k != K::default()) {
            k.write_le(&mut out);
        }
        out
    }

    pub fn from_bytes(b: &[u8]) -> KResult<Self> {
        let bad = |why: String| KernelError::value(format!("not a KeySet snapshot: {why}"));
        if b.len() < HEADER || &b[..8] != MAGIC {
            return Err(bad("missing MDFKSET header".into()));
        }
        let word =
            |r: std::ops::Range<usize>| u32::from_le_bytes(b[r].try_into().expect("4 bytes"));
        let version = word(8..12);
        if version != FORMAT_VERSION {
            return Err(bad(format!(
                "format version {version}, this build reads {FORMAT_VERSION}"
            )));
        }
        let width = word(12..16) as usize;
        if width != K::BYTES {
            return Err(bad(format!(
                "snapshot holds {}-bit keys, this set holds {}-bit keys",
                width * 8,
                K::BYTES * 8
            )));
        }
        let count = u64::from_le_bytes(b[16..24].try_into().expect("8 bytes"));
        let body = &b[HEADER..];
        if Some(body.len() as u64) != count.checked_mul(K::BYTES as u64) {
            return Err(bad(format!("{} key bytes for {count} keys", body.len())));
        }
        let mut t = Self::with_capacity(count as usize);
        for chunk in body.chunks_exact(K::BYTES) {
            if !t.insert(K::read_le(chunk)) {
                return Err(bad("duplicate key".into()));
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    #[test]
    fn insert_semantics() {
        let mut t = KeyTable::<u64>::new();
        assert_eq!(
            t.insert_many(&[5, 0, 5, 7, 0], |_| true),
            vec![true, true, false, true, false]
        );
        assert_eq!(
            t.insert_many(&[7, 8, 9], |i| i != 1),
            vec![false, false, true]
        );
        assert_eq!(t.len(), 4);
        assert_eq!(
            t.contains_many(&[0, 5, 7, 8, 9, 10]),
            vec![true, true, true, false, true, false]
        );
    }

    #[test]
    fn grows_and_snapshots() {
        let mut t = KeyTable::<u64>::new();
        let keys: Vec<u64> = (0..100_000u64).map(|i| i << 20).collect();
        assert!(t.insert_many(&keys, |_| true).iter().all(|&b| b));
        assert!(t.memory_bytes() as f64 / t.len() as f64 <= 24.0);
        let back = KeyTable::<u64>::from_bytes(&t.to_bytes()).unwrap();
        assert_eq!(back.len(), t.len());
        assert!(back.contains_many(&keys).iter().all(|&b| b));
        assert!(KeyTable::<u128>::from_bytes(&t.to_bytes()).is_err());
        assert!(KeyTable::<u64>::from_bytes(b"junk").is_err());
        let mut trunc = t.to_bytes();
        trunc.pop();
        assert!(KeyTable::<u64>::from_bytes(&trunc).is_err());
    }

    #[test]
    fn wide_keys() {
        let mut t = KeyTable::<u128>::new();
        assert!(t.insert(1u128 << 100));
        assert!(!t.insert(1u128 << 100));
        assert!(t.insert(1));
        assert!(!t.contains(2));
        let back = KeyTable::<u128>::from_bytes(&t.to_bytes()).unwrap();
        assert!(back.contains(1u128 << 100) && back.contains(1));
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(100))]
        #[test]
        fn matches_std_hashset(keys in proptest::collection::vec(0u64..64, 0..300), bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut t = KeyTable::<u64>::new();
            let mut reference = HashSet::new();
            let got = t.insert_many(&keys, |_| true);
            let want: Vec<bool> = keys.iter().map(|&k| reference.insert(k)).collect();
            prop_assert_eq!(got, want);
            prop_assert_eq!(t.len(), reference.len());
            let _ = KeyTable::<u64>::from_bytes(&bytes);
        }
    }
}
