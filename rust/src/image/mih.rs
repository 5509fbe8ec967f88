//! Multi-index hashing keys for Hamming-distance search over 64-bit hashes: the bits are cut
//! into `max_hamming + 1` contiguous blocks; two hashes within `max_hamming` differing bits
//! agree exactly on at least one block (pigeonhole), so equal block keys give every candidate
//! pair, which is then verified by popcount.

use crate::error::{KResult, KernelError};

/// Bit widths of the `blocks` blocks, most significant block first: `64 % blocks` blocks of
/// `64 / blocks + 1` bits, then the rest of `64 / blocks` bits.
pub fn block_widths(blocks: usize) -> Vec<u32> {
    let (base, extra) = (64 / blocks, 64 % blocks);
    (0..blocks)
        .map(|i| (base + usize::from(i < extra)) as u32)
        .collect()
}

/// MurmurHash3's 64-bit finaliser: a bijection of `u64` that spreads keys for hash tables.
#[inline]
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// Check `max_hamming` (0..=63: every block keeps at least one bit).
pub fn check_max_hamming(max_hamming: u64) -> KResult<usize> {
    if max_hamming > 63 {
        return Err(KernelError::value(format!(
            "max_hamming must be in 0..=63 bits, got {max_hamming}"
        )));
    }
    Ok(max_hamming as usize)
}

/// The `max_hamming + 1` keys of `hash`, written to `out`. Key of block `i` with bits `b`:
/// `fmix64(i << 56 | b)` (blocks have at most 32 bits when there are two or more, so the
/// pre-image is injective in `(i, b)` and the bijective mixer keeps keys of different blocks
/// distinct); with a single block the key is `fmix64(hash)`.
pub fn block_keys(hash: u64, widths: &[u32], out: &mut [u64]) {
    if widths.len() == 1 {
        out[0] = fmix64(hash);
        return;
    }
    let mut shift = 64;
    for (i, (&w, o)) in widths.iter().zip(out.iter_mut()).enumerate() {
        shift -= w;
        let bits = (hash >> shift) & ((1u64 << w) - 1);
        *o = fmix64(((i as u64) << 56) | bits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn keys(h: u64, m: usize) -> Vec<u64> {
        let w = block_widths(m + 1);
        let mut out = vec![0; m + 1];
        block_keys(h, &w, &mut out);
        out
    }

    #[test]
    fn widths_cover_64_bits_evenly() {
        for blocks in 1..=64 {
            let w = block_widths(blocks);
            assert_eq!(w.iter().sum::<u32>(), 64);
            assert!(w.iter().max().unwrap() - w.iter().min().unwrap() <= 1);
        }
        assert_eq!(block_widths(7), vec![10, 9, 9, 9, 9, 9, 9]);
    }

    #[test]
    fn blocks_never_collide_across_indices() {
        // Same block bits (all zero) in every block: keys must still differ by block index.
        let k = keys(0, 6);
        let set: std::collections::HashSet<_> = k.iter().collect();
        assert_eq!(set.len(), 7);
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(512))]

        #[test]
        fn close_hashes_share_a_key(h: u64, flips in proptest::collection::vec(0u32..64, 0..12), m in 0usize..12) {
            let mut g = h;
            for f in flips.iter().take(m) {
                g ^= 1 << f;
            }
            prop_assume!((h ^ g).count_ones() as usize <= m);
            let (a, b) = (keys(h, m), keys(g, m));
            prop_assert!(a.iter().zip(&b).any(|(x, y)| x == y));
        }

        #[test]
        fn keys_are_equal_only_for_equal_blocks(h: u64, g: u64, m in 1usize..20) {
            let (a, b) = (keys(h, m), keys(g, m));
            let w = block_widths(m + 1);
            let mut shift = 64;
            for i in 0..=m {
                shift -= w[i];
                let mask = (1u64 << w[i]) - 1;
                prop_assert_eq!(a[i] == b[i], (h >> shift) & mask == (g >> shift) & mask);
            }
        }
    }
}
