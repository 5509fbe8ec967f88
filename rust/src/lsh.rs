//! LSH banding for MinHash signatures (`lsh_band_keys`) and the band/row choice
//! (`optimal_bands_rows`) that minimises weighted false-positive and false-negative mass of
//! the S-curve `P(s) = 1 - (1 - s^r)^b`, as datasketch's `MinHashLSH` does.

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{KResult, KernelError};

/// Bits reserved at the top of a key for the band index.
fn band_bits(bands: usize) -> u32 {
    usize::BITS - (bands.max(1) - 1).leading_zeros()
}

/// Key of one band: the band index in the top `band_bits(bands)` bits, the rest from
/// `xxh3_64` of the band's `rows` values as little-endian u32 bytes. Keys of different bands
/// therefore never collide.
pub fn band_key(band: usize, bands: usize, values: &[u32], buf: &mut Vec<u8>) -> u64 {
    buf.clear();
    for v in values {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    let h = xxh3_64(buf);
    match band_bits(bands) {
        0 => h,
        bits => ((band as u64) << (64 - bits)) | (h >> bits),
    }
}

pub fn check_bands(bands: usize, rows: usize, num_perm: usize) -> KResult<()> {
    if bands == 0 || rows == 0 {
        return Err(KernelError::value(format!(
            "bands and rows must be >= 1, got bands={bands}, rows={rows}"
        )));
    }
    if bands.saturating_mul(rows) > num_perm {
        return Err(KernelError::value(format!(
            "bands*rows = {bands}*{rows} = {} exceeds the signature length {num_perm}; \
             use optimal_bands_rows(threshold, {num_perm}) to pick them",
            bands.saturating_mul(rows)
        )));
    }
    Ok(())
}

/// Band keys of `n = sigs.len() / num_perm` signatures, row-major (`row * bands + band`).
pub fn band_keys(sigs: &[u32], num_perm: usize, bands: usize, rows: usize) -> KResult<Vec<u64>> {
    check_bands(bands, rows, num_perm)?;
    let n = sigs.len() / num_perm;
    let mut out = vec![0u64; n * bands];
    out.par_chunks_mut(bands)
        .zip(sigs.par_chunks(num_perm))
        .with_min_len(64)
        .for_each_init(Vec::new, |buf, (keys, sig)| {
            for (j, k) in keys.iter_mut().enumerate() {
                *k = band_key(j, bands, &sig[j * rows..(j + 1) * rows], buf);
            }
        });
    Ok(out)
}

/// Integral of `f` over `[lo, hi]`, composite Simpson with 1000 intervals
/// (the integrands are smooth polynomials of degree <= b*r).
fn integrate(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    const N: usize = 1000;
    let h = (hi - lo) / N as f64;
    let mut sum = f(lo) + f(hi);
    for i in 1..N {
        let w = if i % 2 == 1 { 4.0 } else { 2.0 };
        sum += w * f(lo + i as f64 * h);
    }
    sum * h / 3.0
}

fn collision_prob(s: f64, b: usize, r: usize) -> f64 {
    1.0 - (1.0 - s.powi(r as i32)).powi(b as i32)
}

/// `(bands, rows)` with `bands * rows <= num_perm` minimising
/// `fp_weight * ∫_0^t P(s) ds + fn_weight * ∫_t^1 (1 - P(s)) ds`.
pub fn optimal_bands_rows(
    threshold: f64,
    num_perm: usize,
    fp_weight: f64,
    fn_weight: f64,
) -> KResult<(usize, usize)> {
    if !(threshold > 0.0 && threshold < 1.0) {
        return Err(KernelError::value(format!(
            "threshold must be in (0, 1), got {threshold}"
        )));
    }
    if num_perm == 0 || num_perm > 1 << 16 {
        return Err(KernelError::value(format!(
            "num_perm must be in 1..=65536, got {num_perm}"
        )));
    }
    let total = fp_weight + fn_weight;
    if !(fp_weight >= 0.0 && fn_weight >= 0.0 && total > 0.0 && total.is_finite()) {
        return Err(KernelError::value(format!(
            "fp_weight and fn_weight must be finite, >= 0 and not both 0, got {fp_weight} and {fn_weight}"
        )));
    }
    let mut best = (f64::INFINITY, (1, 1));
    for b in 1..=num_perm {
        for r in 1..=num_perm / b {
            let fp = integrate(|s| collision_prob(s, b, r), 0.0, threshold);
            let fnp = integrate(|s| 1.0 - collision_prob(s, b, r), threshold, 1.0);
            let err = fp * fp_weight + fnp * fn_weight;
            if err < best.0 {
                best = (err, (b, r));
            }
        }
    }
    Ok(best.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keys_layout_and_band_separation() {
        let sig: Vec<u32> = (0..8).collect();
        let two = [sig.clone(), sig.clone()].concat();
        let keys = band_keys(&two, 8, 4, 2).unwrap();
        assert_eq!(keys.len(), 8);
        assert_eq!(keys[..4], keys[4..]);
        // Same band values in different bands still give different keys.
        let same = vec![9u32; 8];
        let k = band_keys(&same, 8, 4, 2).unwrap();
        assert_eq!(k.iter().collect::<std::collections::HashSet<_>>().len(), 4);
        assert_eq!(k[2] >> 62, 2);
        assert!(band_keys(&sig, 8, 3, 3).is_err());
        assert!(band_keys(&sig, 8, 0, 3).is_err());
        assert_eq!(
            band_keys(&sig, 8, 1, 8).unwrap(),
            vec![xxh3_64(
                &sig.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()
            )]
        );
    }

    #[test]
    fn optimal_params_are_sane() {
        let (b, r) = optimal_bands_rows(0.5, 128, 0.5, 0.5).unwrap();
        assert!(b * r <= 128);
        // The S-curve's midpoint (1/b)^(1/r) should sit near the threshold.
        let mid = (1.0 / b as f64).powf(1.0 / r as f64);
        assert!((mid - 0.5).abs() < 0.15, "{b} {r} {mid}");
        assert!(optimal_bands_rows(1.5, 128, 0.5, 0.5).is_err());
        assert!(optimal_bands_rows(0.5, 128, 0.0, 0.0).is_err());
        assert!(integrate(|x| x * x, 0.0, 1.0) - 1.0 / 3.0 < 1e-12);
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(100))]
        #[test]
        fn fuzz_band_keys(sig in proptest::collection::vec(any::<u32>(), 1..64), b in 1usize..10, r in 1usize..10) {
            let res = band_keys(&sig, sig.len(), b, r);
            prop_assert_eq!(res.is_ok(), b * r <= sig.len());
        }
    }
}
