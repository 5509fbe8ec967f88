//! Technical quality metrics. Exact definitions (the benchmark's and the tests' Pillow + numpy
//! reference computes the same):
//!
//! 1. Decode the whole image to RGB at full size (alpha dropped, grey replicated);
//!    `grey = (19595 R + 38470 G + 7471 B + 0x8000) >> 16` per pixel (Pillow's `convert("L")`).
//! 2. `blockiness` on the full-size grey image: absolute differences of horizontal neighbours
//!    `|g[y][x+1] - g[y][x]|` and vertical neighbours `|g[y+1][x] - g[y][x]|`; a difference is
//!    *across a block boundary* when the pair straddles the 8-pixel JPEG grid (`(x+1) % 8 == 0`,
//!    resp. `(y+1) % 8 == 0`), otherwise *inside*. `blockiness = (mean_across + 0.01) /
//!    (mean_inside + 0.01)`: about 1 when the grid is invisible, higher when it shows (1.0 when
//!    the image has no pair across a boundary).
//! 3. Reduce: `k = ceil(max(width, height) / max_side)`; when `k > 1` the RGB image is box
//!    reduced by `k` in both directions (`Image.reduce(k)`: box means with Pillow's rounding, edge
//!    boxes averaged over the pixels they cover), then converted to grey as in 1.
//! 4. On the reduced grey image: `brightness` = mean, `contrast` = population std, `entropy` =
//!    Shannon entropy (bits) of the 256-bin histogram, `sharpness` = population variance of the
//!    Laplacian `[0,1,0; 1,-4,1; 0,1,0]` over the interior pixels (no padding; 0 when a side is
//!    under 3 pixels).
//! 5. On the reduced RGB image: `colorfulness` (Hasler & Süsstrunk 2003) with `rg = R - G`,
//!    `yb = (R + G) / 2 - B`: `sqrt(std_rg² + std_yb²) + 0.3 * sqrt(mean_rg² + mean_yb²)`,
//!    population std.

use super::decode::{decode, luma, Channels};
use super::meta;
use super::resize::reduce;
use super::ImgResult;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quality {
    pub sharpness: f64,
    pub entropy: f64,
    pub brightness: f64,
    pub contrast: f64,
    pub colorfulness: f64,
    pub blockiness: f64,
    pub width: u32,
    pub height: u32,
}

/// Metrics of one encoded image; see the module docs.
pub fn quality(b: &[u8], max_side: usize, max_pixels: u64) -> ImgResult<Quality> {
    let m = meta::read(b, max_pixels)?;
    let px = decode(b, &m, Channels::Rgb, false)?;
    let (w, h) = (px.width, px.height);
    let grey_full = grey_of(&px.data);
    let blockiness = blockiness(&grey_full, w, h);
    let k = w.max(h).div_ceil(max_side.max(1));
    let (rgb, grey, w, h) = if k > 1 {
        let rgb = reduce(&px.data, (w, h, 3), (k, k));
        let grey = grey_of(&rgb);
        (rgb, grey, w.div_ceil(k), h.div_ceil(k))
    } else {
        (px.data, grey_full, w, h)
    };
    let (brightness, contrast, entropy) = histogram_stats(&grey);
    Ok(Quality {
        sharpness: laplacian_variance(&grey, w, h),
        entropy,
        brightness,
        contrast,
        colorfulness: colorfulness(&rgb),
        blockiness,
        width: m.width,
        height: m.height,
    })
}

fn grey_of(rgb: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; rgb.len() / 3];
    for (o, p) in out.iter_mut().zip(rgb.chunks_exact(3)) {
        *o = luma(p[0], p[1], p[2]);
    }
    out
}

/// Sum of `|a[i] - b[i]|`, written so that it vectorises (row sums fit in `u32`).
#[inline]
fn sad(a: &[u8], b: &[u8]) -> u64 {
    let s: u32 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| u32::from(x.abs_diff(y)))
        .sum();
    u64::from(s)
}

/// (mean, population std, entropy in bits) of the grey values.
pub fn histogram_stats(grey: &[u8]) -> (f64, f64, f64) {
    let mut hist = [0u64; 256];
    for &v in grey {
        hist[usize::from(v)] += 1;
    }
    let n = grey.len() as f64;
    let (mut s1, mut s2, mut ent) = (0u64, 0u64, 0.0f64);
    for (v, &c) in hist.iter().enumerate() {
        s1 += v as u64 * c;
        s2 += (v * v) as u64 * c;
        if c > 0 {
            let p = c as f64 / n;
            ent -= p * p.log2();
        }
    }
    let mean = s1 as f64 / n;
    let var = (s2 as f64 / n - mean * mean).max(0.0);
    (mean, var.sqrt(), ent)
}

/// Population variance of the 4-neighbour Laplacian over interior pixels.
pub fn laplacian_variance(g: &[u8], w: usize, h: usize) -> f64 {
    if w < 3 || h < 3 {
        return 0.0;
    }
    let (mut s1, mut s2) = (0i64, 0i64);
    for y in 1..h - 1 {
        let (up, row, down) = (
            &g[(y - 1) * w..y * w],
            &g[y * w..(y + 1) * w],
            &g[(y + 1) * w..(y + 2) * w],
        );
        let (mut r1, mut r2) = (0i64, 0i64);
        for x in 1..w - 1 {
            let l = i32::from(up[x])
                + i32::from(down[x])
                + i32::from(row[x - 1])
                + i32::from(row[x + 1])
                - 4 * i32::from(row[x]);
            r1 += i64::from(l);
            r2 += i64::from(l * l);
        }
        s1 += r1;
        s2 += r2;
    }
    let n = ((w - 2) * (h - 2)) as f64;
    let mean = s1 as f64 / n;
    (s2 as f64 / n - mean * mean).max(0.0)
}

/// Hasler–Süsstrunk colourfulness of interleaved RGB.
pub fn colorfulness(rgb: &[u8]) -> f64 {
    // Sums of rg and of 2*yb = R + G - 2B are exact in integers.
    let (mut a1, mut a2, mut b1, mut b2) = (0i64, 0i64, 0i64, 0i64);
    for p in rgb.chunks_exact(3) {
        let (r, g, b) = (i64::from(p[0]), i64::from(p[1]), i64::from(p[2]));
        let (rg, yb2) = (r - g, r + g - 2 * b);
        a1 += rg;
        a2 += rg * rg;
        b1 += yb2;
        b2 += yb2 * yb2;
    }
    let n = (rgb.len() / 3) as f64;
    if n == 0.0 {
        return 0.0;
    }
    let (mrg, myb) = (a1 as f64 / n, b1 as f64 / n / 2.0);
    let vrg = (a2 as f64 / n - mrg * mrg).max(0.0);
    let vyb = (b2 as f64 / n / 4.0 - myb * myb).max(0.0);
    (vrg + vyb).sqrt() + 0.3 * (mrg * mrg + myb * myb).sqrt()
}

/// JPEG grid artifact score of a full-size grey image; see the module docs.
pub fn blockiness(g: &[u8], w: usize, h: usize) -> f64 {
    let (mut across, mut n_across, mut inside, mut n_inside) = (0u64, 0u64, 0u64, 0u64);
    for (y, row) in g.chunks_exact(w).enumerate() {
        let total = sad(&row[1..], &row[..w - 1]);
        let at_grid: u64 = (8..w)
            .step_by(8)
            .map(|x| u64::from(row[x].abs_diff(row[x - 1])))
            .sum();
        let n_grid = ((w - 1) / 8) as u64;
        across += at_grid;
        n_across += n_grid;
        inside += total - at_grid;
        n_inside += (w - 1) as u64 - n_grid;
        if y + 1 < h {
            let next = &g[(y + 1) * w..(y + 2) * w];
            let s = sad(row, next);
            if (y + 1) % 8 == 0 {
                (across, n_across) = (across + s, n_across + w as u64);
            } else {
                (inside, n_inside) = (inside + s, n_inside + w as u64);
            }
        }
    }
    if n_across == 0 || n_inside == 0 {
        return 1.0;
    }
    (across as f64 / n_across as f64 + 0.01) / (inside as f64 / n_inside as f64 + 0.01)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blockiness_sees_an_8px_grid() {
        let (w, h) = (64, 64);
        // Flat 8x8 blocks of alternating level: every change is on the grid.
        let blocky: Vec<u8> = (0..w * h)
            .map(|i| {
                if (i % w / 8 + i / w / 8) % 2 == 0 {
                    100
                } else {
                    120
                }
            })
            .collect();
        assert!(blockiness(&blocky, w, h) > 100.0);
        // A smooth ramp changes everywhere alike.
        let ramp: Vec<u8> = (0..w * h).map(|i| (i % w * 3) as u8).collect();
        let b = blockiness(&ramp, w, h);
        assert!((b - 1.0).abs() < 0.01, "{b}");
    }

    #[test]
    fn stats_of_two_levels() {
        let g = [0u8, 0, 255, 255];
        let (mean, std, ent) = histogram_stats(&g);
        assert_eq!((mean, std, ent), (127.5, 127.5, 1.0));
        assert_eq!(laplacian_variance(&[5; 16], 4, 4), 0.0);
        assert_eq!(colorfulness(&[9, 9, 9, 200, 200, 200]), 0.0);
    }
}
