//! Sorting unsorted 64-bit keys, each carrying a value (a row number): every key once, in order,
//! with the value of its first occurrence (chunks in order; within a chunk, the first).
//!
//! A dedup index's `update` run used to sort each batch's new keys on a thread of its own while
//! the run went on, then merge the sorted runs ([`crate::merge`]). On the MinHash benchmark at 1 M
//! rows (62 batches, 7.5 M new keys) that thread's 0.56-0.60 s of CPU (numpy's timsort) competed
//! with the run: the run before its last step took ~0.4 s longer than a `read` run, and the merge
//! after it 0.2-0.37 s. Hashed keys spread evenly over their top bits, so one pass that counts them
//! by their top bits and one that scatters each (key, value) into its part (in input order, so a
//! key's first occurrence stays first) leave parts of ~32 K pairs. Each part is sorted stably in
//! cache: 0.25-0.38 s for those 7.5 M keys at the end of the run, 0.2-0.29 s in a loop of its own
//! (2 threads). Keys that do not spread (not hashes) only make the parts uneven: still correct,
//! slower. At 2 M rows (15 M keys) the memory the kernel touched first became its cost; see
//! [`sort_unique`]: with the outputs scattered into directly, 0.34-0.42 s at the end of the run
//! (0.73-1.3 s before), 0.28 s in a loop of its own (0.39 s before).

use rayon::prelude::*;

/// Pairs a part holds on average: 512 KiB, sorted in the L2 cache, and few parts enough (256 for
/// 7.5 M keys) that the scatter's write streams stay within the TLB. Measured in an `update` run
/// of the MinHash benchmark (7.5 M keys): 2 K pairs a part (4,096 parts) scattered in 0.19 s and
/// the whole sort took 0.48-0.57 s.
const PAIRS_A_PART: usize = 1 << 15;
/// At most 2^16 parts (the counts stay in cache while scattering).
const MAX_BITS: u32 = 16;

/// Every key once, ascending, with the value of its first occurrence; `keys[i]` and `values[i]`
/// are one chunk and have one length.
///
/// Every phase runs on the kernel pool: the input is cut into one stretch a thread (in order),
/// each stretch counted, then scattered to its own places in each part of the two outputs (a
/// part holds the earlier stretches' pairs first, so the input order survives); each part is
/// copied into a scratch of its thread's, sorted stably there in cache and written back without
/// its repeats; the parts are then moved together (nothing moves when no key repeats).
///
/// The outputs are the scatter's own two arrays (12 bytes a pair for `u32` values), not a third
/// array of (key, value) pairs copied out at the end: in the MinHash benchmark at 2 M rows, the
/// pages the kernel touches first were its cost. With the pairs array (16 bytes a pair) and the
/// two outputs copied from it, the call at the end of crawl A's `update` run (17 M keys) took
/// 1.0 s, 1.14 s of it in the system (116 K page faults); called again on the same keys in that
/// process, 0.99 s, then 0.41 s; on 15 M random keys in a process of its own, 0.39 s.
pub fn sort_unique<V: Copy + Default + Send + Sync>(
    keys: &[&[u64]],
    values: &[&[V]],
) -> (Vec<u64>, Vec<V>) {
    let total: usize = keys.iter().map(|k| k.len()).sum();
    let bits = partition_bits(total);
    let parts = 1usize << bits;
    let part_of = move |key: u64| {
        if bits == 0 {
            0
        } else {
            (key >> (64 - bits)) as usize
        }
    };
    let stretches = stretches(keys, values, rayon::current_num_threads());
    let counts: Vec<Vec<usize>> = stretches
        .par_iter()
        .map(|stretch| {
            let mut count = vec![0usize; parts];
            for &key in stretch.iter().flat_map(|(k, _)| k.iter()) {
                count[part_of(key)] += 1;
            }
            count
        })
        .collect();
    // where each stretch writes in each part: the part's start, past the earlier stretches' pairs
    let mut starts = vec![0usize; parts + 1];
    let mut offsets = vec![vec![0usize; parts]; stretches.len()];
    for p in 0..parts {
        let mut at = starts[p];
        for (s, count) in counts.iter().enumerate() {
            offsets[s][p] = at;
            at += count[p];
        }
        starts[p + 1] = at;
    }
    let mut out_keys = vec![0u64; total];
    let mut out_values = vec![V::default(); total];
    let (to_keys, to_values) = (Out(out_keys.as_mut_ptr()), Out(out_values.as_mut_ptr()));
    stretches
        .par_iter()
        .zip(offsets)
        .for_each(|(stretch, mut next)| {
            for (chunk, chunk_values) in stretch {
                for (&key, &value) in chunk.iter().zip(chunk_values.iter()) {
                    let at = &mut next[part_of(key)];
                    // SAFETY: stretch s writes part p only at offsets[s][p] .. offsets[s][p] +
                    // counts[s][p] (it counted those keys above), ranges that no other stretch or
                    // part touches and that end within `total`, the length of both outputs; they
                    // outlive this loop and are read only after it.
                    unsafe {
                        to_keys.write(*at, key);
                        to_values.write(*at, value);
                    }
                    *at += 1;
                }
            }
        });
    let kept: Vec<usize> = split(&mut out_keys, &starts)
        .into_par_iter()
        .zip(split(&mut out_values, &starts))
        .map_init(Vec::new, |scratch: &mut Vec<(u64, V)>, (k, v)| {
            scratch.clear();
            scratch.extend(k.iter().copied().zip(v.iter().copied()));
            scratch.sort_by_key(|&(key, _)| key); // stable: the first occurrence leads
            let mut n = 0;
            for &(key, value) in scratch.iter() {
                if n == 0 || k[n - 1] != key {
                    k[n] = key;
                    v[n] = value;
                    n += 1;
                }
            }
            n
        })
        .collect();
    let mut unique = 0;
    for (p, &n) in kept.iter().enumerate() {
        if starts[p] != unique {
            // to the left, over the repeats the parts before dropped (a part never reaches past its start)
            out_keys.copy_within(starts[p]..starts[p] + n, unique);
            out_values.copy_within(starts[p]..starts[p] + n, unique);
        }
        unique += n;
    }
    out_keys.truncate(unique);
    out_values.truncate(unique);
    (out_keys, out_values)
}

/// A pointer into an output that the scatter's threads share (each writes its own places).
#[derive(Clone, Copy)]
struct Out<T>(*mut T);
// SAFETY: see the writes in `sort_unique`: the threads write disjoint places, and nothing reads
// them until every thread is done.
unsafe impl<T> Send for Out<T> {}
unsafe impl<T> Sync for Out<T> {}

impl<T> Out<T> {
    /// # Safety
    /// `at` is within the output, and no other thread writes or reads that place meanwhile.
    unsafe fn write(&self, at: usize, item: T) {
        // SAFETY: the caller's promise
        unsafe { self.0.add(at).write(item) }
    }
}

/// `data` cut at `bounds` (`bounds[0] == 0`, the last one its length): one slice a part.
fn split<'a, T>(data: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(bounds.len().saturating_sub(1));
    let mut rest = data;
    for w in bounds.windows(2) {
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
        out.push(part);
        rest = tail;
    }
    out
}

type Stretch<'a, V> = Vec<(&'a [u64], &'a [V])>;

/// The input cut into `n` stretches of about equal length, in order (chunks cut where needed).
fn stretches<'a, V>(keys: &[&'a [u64]], values: &[&'a [V]], n: usize) -> Vec<Stretch<'a, V>> {
    let total: usize = keys.iter().map(|k| k.len()).sum();
    let each = total.div_ceil(n.max(1)).max(1);
    let mut out: Vec<Stretch<'a, V>> = vec![Vec::new()];
    let mut room = each;
    for (&k, &v) in keys.iter().zip(values) {
        let (mut k, mut v) = (k, v);
        while !k.is_empty() {
            if room == 0 {
                out.push(Vec::new());
                room = each;
            }
            let take = room.min(k.len());
            out.last_mut()
                .expect("one stretch at least")
                .push((&k[..take], &v[..take]));
            (k, v) = (&k[take..], &v[take..]);
            room -= take;
        }
    }
    out
}

/// How many top bits of a key choose its part: about [`PAIRS_A_PART`] pairs a part.
fn partition_bits(total: usize) -> u32 {
    let parts = total.div_ceil(PAIRS_A_PART).max(1);
    parts.next_power_of_two().trailing_zeros().min(MAX_BITS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the sort must give: a key's first (key, value) in chunk order, keys ascending.
    fn reference(keys: &[Vec<u64>], values: &[Vec<u64>]) -> (Vec<u64>, Vec<u64>) {
        let mut seen = std::collections::BTreeMap::new();
        for (k, v) in keys.iter().flatten().zip(values.iter().flatten()) {
            seen.entry(*k).or_insert(*v);
        }
        seen.into_iter().unzip()
    }

    /// `count` chunks of `len` keys drawn from `spread` values (repeats within and across chunks),
    /// each value its global position (so the first occurrence is visible).
    fn chunks(
        seed: u64,
        count: usize,
        len: usize,
        spread: u64,
        shift: u32,
    ) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
        let mut state = seed;
        let mut position = 0;
        let mut keys = Vec::new();
        let mut values = Vec::new();
        for _ in 0..count {
            let mut k = Vec::new();
            let mut v = Vec::new();
            for _ in 0..len {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                k.push(((state >> 11) % spread) << shift);
                v.push(position);
                position += 1;
            }
            keys.push(k);
            values.push(v);
        }
        (keys, values)
    }

    fn check(keys: &[Vec<u64>], values: &[Vec<u64>]) {
        let k: Vec<&[u64]> = keys.iter().map(Vec::as_slice).collect();
        let v: Vec<&[u64]> = values.iter().map(Vec::as_slice).collect();
        assert_eq!(sort_unique(&k, &v), reference(keys, values));
    }

    #[test]
    fn first_occurrence_wins_within_and_across_chunks() {
        let (keys, values) = chunks(7, 9, 50_000, 200_000, 40); // many repeats, spread over the top bits
        check(&keys, &values);
    }

    /// Repeats in every part: each part keeps fewer pairs than it got, and the parts after it move
    /// left. Seen red with the parts left where they were (the tests above have their repeats in
    /// one part, or none).
    #[test]
    fn repeats_spread_over_the_parts_close_up() {
        let (keys, values) = chunks(11, 9, 50_000, 200_000, 46); // 18 bits shifted to the top
        check(&keys, &values);
    }

    #[test]
    fn keys_that_do_not_spread_over_the_top_bits_still_sort() {
        let (keys, values) = chunks(3, 4, 30_000, 1000, 0); // small keys: one part holds them all
        check(&keys, &values);
        let (keys, values) = chunks(5, 3, 20_000, u64::MAX >> 11, 11); // full range
        check(&keys, &values);
    }

    #[test]
    fn empty_and_tiny_inputs() {
        check(&[], &[]);
        check(&[vec![], vec![]], &[vec![], vec![]]);
        check(&[vec![u64::MAX, 0, u64::MAX]], &[vec![1, 2, 3]]);
    }

    #[test]
    fn parts_hold_about_a_target_each() {
        assert_eq!(partition_bits(0), 0);
        assert_eq!(partition_bits(PAIRS_A_PART), 0);
        assert_eq!(partition_bits(PAIRS_A_PART + 1), 1);
        assert_eq!(partition_bits(6_000_000), 8);
        assert_eq!(partition_bits(usize::MAX / 2), MAX_BITS);
    }
}
