//! Resampling as Pillow does it, so hashes and thumbnails agree with `Image.resize`:
//! separable convolution (horizontal pass first, restricted to the rows the vertical pass
//! reads), filter support scaled by the reduction factor (antialiasing), coefficients
//! normalised then rounded to 22-bit fixed point, 8-bit rounding and clipping after each pass
//! (Pillow's `Resample.c`, `ImagingResampleInner` with `*_8bpc`). Plus Pillow's
//! `Image.reduce` (integer box averaging) used to shrink large images cheaply first.

/// Pillow's resampling filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    Box,
    Bilinear,
    Lanczos,
}

impl Filter {
    fn support(self) -> f64 {
        match self {
            Self::Box => 0.5,
            Self::Bilinear => 1.0,
            Self::Lanczos => 3.0,
        }
    }

    fn weight(self, x: f64) -> f64 {
        match self {
            Self::Box => f64::from(u8::from((-0.5..0.5).contains(&x))),
            Self::Bilinear => (1.0 - x.abs()).max(0.0),
            Self::Lanczos if x == 0.0 => 1.0,
            Self::Lanczos if (-3.0..3.0).contains(&x) => {
                // sinc(x) * sinc(x / 3) with one sine: sin(pi x) = 3s - 4s^3, s = sin(pi x / 3).
                let t = std::f64::consts::PI * x / 3.0;
                let s = t.sin();
                (3.0 * s - 4.0 * s * s * s) * s / (3.0 * t * t)
            }
            Self::Lanczos => 0.0,
        }
    }
}

const PRECISION_BITS: u32 = 32 - 8 - 2;

/// Per output sample: first source index and fixed-point weights (`precompute_coeffs` +
/// `normalize_coeffs_8bpc`). `in0..in1` is the source interval (Pillow's `box`, as f32).
fn coeffs(
    in_size: usize,
    in0: f32,
    in1: f32,
    out_size: usize,
    f: Filter,
) -> Vec<(usize, Vec<i32>)> {
    let scale = f64::from(in1 - in0) / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = f.support() * filterscale;
    let ss = 1.0 / filterscale;
    (0..out_size)
        .map(|xx| {
            let center = f64::from(in0) + (xx as f64 + 0.5) * scale;
            let xmin = ((center - support + 0.5) as i64).max(0) as usize;
            let xmax = ((center + support + 0.5) as i64).min(in_size as i64) as usize;
            let w: Vec<f64> = (xmin..xmax.max(xmin))
                .map(|x| f.weight((x as f64 - center + 0.5) * ss))
                .collect();
            let ww: f64 = w.iter().sum();
            let one = f64::from(1u32 << PRECISION_BITS);
            let k = w
                .iter()
                .map(|&v| {
                    let v = if ww == 0.0 { v } else { v / ww };
                    (if v < 0.0 {
                        -0.5 + v * one
                    } else {
                        0.5 + v * one
                    }) as i32
                })
                .collect();
            (xmin, k)
        })
        .collect()
}

#[inline]
fn clip8(ss: i32) -> u8 {
    (ss >> PRECISION_BITS).clamp(0, 255) as u8
}

/// Resize `src` (`w` x `h`, `c` interleaved channels) to `ow` x `oh`, reading the source box
/// `(x0, y0, x1, y1)` as `Image.resize(size, filter, box)` does.
#[allow(clippy::too_many_arguments)]
pub fn resample(
    src: &[u8],
    (w, h, c): (usize, usize, usize),
    (ow, oh): (usize, usize),
    [x0, y0, x1, y1]: [f32; 4],
    f: Filter,
) -> Vec<u8> {
    let horiz = coeffs(w, x0, x1, ow, f);
    let vert = coeffs(h, y0, y1, oh, f);
    let need_h = ow != w || x0 != 0.0 || x1 != ow as f32;
    let need_v = oh != h || y0 != 0.0 || y1 != oh as f32;
    let half = 1i32 << (PRECISION_BITS - 1);
    let (first, last) = (vert[0].0, vert[oh - 1].0 + vert[oh - 1].1.len());
    let (tmp, tw, row0) = if need_h {
        let mut tmp = vec![0u8; (last - first) * ow * c];
        for (y, out) in tmp.chunks_exact_mut(ow * c).enumerate() {
            let row = &src[(first + y) * w * c..(first + y + 1) * w * c];
            for (xx, (xmin, k)) in horiz.iter().enumerate() {
                if c == 1 {
                    // The common grey case as a plain dot product, which the compiler vectorises.
                    let px = &row[*xmin..xmin + k.len()];
                    let ss: i32 = px.iter().zip(k).map(|(&p, &kv)| i32::from(p) * kv).sum();
                    out[xx] = clip8(half + ss);
                    continue;
                }
                for ch in 0..c {
                    let mut ss = half;
                    for (i, &kv) in k.iter().enumerate() {
                        ss += i32::from(row[(xmin + i) * c + ch]) * kv;
                    }
                    out[xx * c + ch] = clip8(ss);
                }
            }
        }
        (tmp, ow, first)
    } else {
        (src.to_vec(), w, 0)
    };
    if !need_v {
        return tmp;
    }
    let stride = tw * c;
    let mut out = vec![0u8; oh * stride];
    let mut acc = vec![0i32; stride];
    for (yy, (ymin, k)) in vert.iter().enumerate() {
        // Accumulate whole source rows so the inner loop runs along memory.
        acc.fill(half);
        for (i, &kv) in k.iter().enumerate() {
            let row = &tmp[(ymin - row0 + i) * stride..(ymin - row0 + i + 1) * stride];
            for (a, &p) in acc.iter_mut().zip(row) {
                *a += i32::from(p) * kv;
            }
        }
        for (o, &a) in out[yy * stride..(yy + 1) * stride].iter_mut().zip(&acc) {
            *o = clip8(a);
        }
    }
    out
}

/// Pillow's rounded division of a sum of `n` bytes by `n` (`Reduce.c`): add `n / 2`, multiply
/// by `floor(2^24 / n)`, shift right by 24. Not always the exact rounded mean (a tie at an edge
/// box can round down), but it is what `Image.reduce` returns, and a multiply is also what
/// makes the reduction cheap (a division per output pixel was its main cost).
struct Divider {
    half: u32,
    mul: u64,
}

impl Divider {
    fn new(n: u32) -> Self {
        Self {
            half: n / 2,
            mul: (1u64 << 24) / u64::from(n),
        }
    }

    #[inline]
    fn round(&self, sum: u32) -> u8 {
        ((u64::from(sum + self.half) * self.mul) >> 24).min(255) as u8
    }
}

/// `Image.reduce((kx, ky))`: mean of each `kx` x `ky` box (boxes at the right and bottom edges
/// are cut by the image and averaged over what they cover), rounded as [`Divider`] does.
/// Output size `ceil(w / kx)` x `ceil(h / ky)`.
pub fn reduce(src: &[u8], (w, h, c): (usize, usize, usize), (kx, ky): (usize, usize)) -> Vec<u8> {
    let (ow, oh) = (w.div_ceil(kx), h.div_ceil(ky));
    let mut out = Vec::with_capacity(ow * oh * c);
    let mut acc = vec![0u32; w * c];
    for oy in 0..oh {
        acc.fill(0);
        let rows = (oy * ky..((oy + 1) * ky).min(h)).len();
        for y in oy * ky..oy * ky + rows {
            for (a, &v) in acc.iter_mut().zip(&src[y * w * c..(y + 1) * w * c]) {
                *a += u32::from(v);
            }
        }
        let full = Divider::new((kx * rows) as u32);
        for (ox, cols) in acc.chunks(kx * c).enumerate() {
            let part;
            let div = if (ox + 1) * kx <= w {
                &full
            } else {
                part = Divider::new((cols.len() / c * rows) as u32);
                &part
            };
            if c == 1 {
                out.push(div.round(cols.iter().sum()));
                continue;
            }
            let mut sums = [0u32; 4];
            if c == 3 {
                for px in cols.chunks_exact(3) {
                    sums[0] += px[0];
                    sums[1] += px[1];
                    sums[2] += px[2];
                }
            } else {
                for px in cols.chunks_exact(c) {
                    for (s, &v) in sums.iter_mut().zip(px) {
                        *s += v;
                    }
                }
            }
            out.extend(sums[..c].iter().map(|&s| div.round(s)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_reduce(
        src: &[u8],
        (w, h, c): (usize, usize, usize),
        (kx, ky): (usize, usize),
    ) -> Vec<u8> {
        let mut out = Vec::new();
        for oy in 0..h.div_ceil(ky) {
            for ox in 0..w.div_ceil(kx) {
                for ch in 0..c {
                    let (mut s, mut n) = (0u32, 0u32);
                    for y in oy * ky..((oy + 1) * ky).min(h) {
                        for x in ox * kx..((ox + 1) * kx).min(w) {
                            s += u32::from(src[(y * w + x) * c + ch]);
                            n += 1;
                        }
                    }
                    out.push((((s + n / 2) as u64 * ((1u64 << 24) / u64::from(n))) >> 24) as u8);
                }
            }
        }
        out
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(200))]

        #[test]
        fn reduce_is_pillows_box_mean(w in 1usize..40, h in 1usize..40, c in 1usize..4, kx in 1usize..70, ky in 1usize..70, seed: u64) {
            let src: Vec<u8> = (0..w * h * c).map(|i| (crate::minhash::splitmix64(&mut (seed ^ i as u64)) >> 56) as u8).collect();
            prop_assert_eq!(reduce(&src, (w, h, c), (kx, ky)), naive_reduce(&src, (w, h, c), (kx, ky)));
        }
    }

    #[test]
    fn divider_is_within_one_of_the_mean() {
        // Pillow's fixed-point rounding is not exact (2/3 gives 0), but never off by a level.
        for n in [1u32, 2, 3, 7, 64, 255, 4095, 5000] {
            let d = Divider::new(n);
            for s in (0..=255 * n)
                .step_by(((n / 16) as usize).max(1))
                .chain([255 * n])
            {
                let exact = f64::from(s) / f64::from(n);
                assert!((f64::from(d.round(s)) - exact).abs() < 1.0, "n={n} s={s}");
            }
        }
    }

    #[test]
    fn identity_and_constant() {
        let src: Vec<u8> = (0..60).map(|i| (i * 4) as u8).collect();
        let full = [0.0, 0.0, 10.0, 6.0];
        assert_eq!(
            resample(&src, (10, 6, 1), (10, 6), full, Filter::Lanczos),
            src
        );
        let flat = vec![200u8; 30 * 20 * 3];
        let out = resample(
            &flat,
            (30, 20, 3),
            (7, 5),
            [0.0, 0.0, 30.0, 20.0],
            Filter::Lanczos,
        );
        assert!(out.iter().all(|&v| v == 200));
    }
}
