//! The MinHash permutations' hot loop: `out[i] = min(out[i], min_x h_i(x))` over a text's
//! shingle hashes, on 32-bit lanes, with AVX-512 or AVX2 where the CPU has them. Split from
//! `minhash.rs` (shingling, signatures), which calls [`permute_min_halves`].

/// The permutation parameters split into 32-bit halves so the hot loop runs on 32-bit lanes:
/// with `a = ah*2^32 + al` and `b = bh*2^32 + bl`,
/// `((a*x + b) mod 2^64) >> 32 == (hi32(al*x + bl) + ah*x + bh) mod 2^32`
/// (`al*x + bl < 2^64`, so the first term cannot overflow).
#[derive(Clone, Copy)]
pub struct Halves<'p> {
    pub al: &'p [u32],
    pub ah: &'p [u32],
    pub bl: &'p [u32],
    pub bh: &'p [u32],
}

#[inline(always)]
fn perm(al: u32, ah: u32, bl: u32, bh: u32, x: u32) -> u32 {
    let lo = ((u64::from(al) * u64::from(x) + u64::from(bl)) >> 32) as u32;
    lo.wrapping_add(ah.wrapping_mul(x)).wrapping_add(bh)
}

/// Permutations `start..start + B` with their minima kept in registers while every shingle
/// streams past; returns the end of the block.
#[inline(always)]
fn permute_block<const B: usize>(
    p: Halves<'_>,
    start: usize,
    xs: &[u32],
    out: &mut [u32],
) -> usize {
    let r = start..start + B;
    let al: &[u32; B] = p.al[r.clone()].try_into().expect("block");
    let ah: &[u32; B] = p.ah[r.clone()].try_into().expect("block");
    let bl: &[u32; B] = p.bl[r.clone()].try_into().expect("block");
    let bh: &[u32; B] = p.bh[r.clone()].try_into().expect("block");
    let mut m = [u32::MAX; B];
    for &x in xs {
        for j in 0..B {
            m[j] = m[j].min(perm(al[j], ah[j], bl[j], bh[j], x));
        }
    }
    for (o, m) in out[r].iter_mut().zip(m) {
        *o = (*o).min(m);
    }
    start + B
}

#[inline(always)]
fn permute_min_portable(p: Halves<'_>, xs: &[u32], out: &mut [u32]) {
    let n = out.len();
    let mut i = 0;
    while i + 64 <= n {
        i = permute_block::<64>(p, i, xs, out);
    }
    while i + 16 <= n {
        i = permute_block::<16>(p, i, xs, out);
    }
    while i < n {
        i = permute_block::<1>(p, i, xs, out);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn permute_min_avx2(p: Halves<'_>, xs: &[u32], out: &mut [u32]) {
    permute_min_portable(p, xs, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
fn permute_min_avx512(p: Halves<'_>, xs: &[u32], out: &mut [u32]) {
    permute_min_portable(p, xs, out)
}

/// `out[i] = min(out[i], min_x h_i(x))`, using AVX-512 or AVX2 when the CPU has them.
pub fn permute_min_halves(p: Halves<'_>, xs: &[u32], out: &mut [u32]) {
    if xs.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512f") && has!("avx512dq") && has!("avx512vl") && has!("avx512bw") {
            // SAFETY: the CPU supports these features (checked just above).
            return unsafe { permute_min_avx512(p, xs, out) };
        }
        if has!("avx2") {
            // SAFETY: as above.
            return unsafe { permute_min_avx2(p, xs, out) };
        }
    }
    permute_min_portable(p, xs, out)
}

/// `out[i] = min(out[i], min_x ((a[i]*x + b[i]) mod 2^64) >> 32)` for 64-bit parameters.
pub fn permute_min(a: &[u64], b: &[u64], xs: &[u32], out: &mut [u32]) {
    let split = |v: &[u64]| -> (Vec<u32>, Vec<u32>) {
        v.iter().map(|&v| (v as u32, (v >> 32) as u32)).unzip()
    };
    let ((al, ah), (bl, bh)) = (split(a), split(b));
    permute_min_halves(
        Halves {
            al: &al,
            ah: &ah,
            bl: &bl,
            bh: &bh,
        },
        xs,
        out,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minhash::permutation_params;
    use std::collections::HashSet;

    #[test]
    fn portable_equals_dispatch() {
        let (a, b) = permutation_params(37, 3);
        let xs: Vec<u32> = (0..50u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let (mut p, mut d) = (vec![u32::MAX; 37], vec![u32::MAX; 37]);
        for (i, slot) in p.iter_mut().enumerate() {
            for &x in &xs {
                let v = (a[i].wrapping_mul(u64::from(x)).wrapping_add(b[i]) >> 32) as u32;
                *slot = (*slot).min(v);
            }
        }
        permute_min(&a, &b, &xs, &mut d);
        assert_eq!(p, d);
        let set: HashSet<u32> = p.iter().copied().collect();
        assert!(set.len() > 30);
    }
}
