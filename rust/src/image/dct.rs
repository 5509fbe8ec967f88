//! The low-frequency corner of a 2-D DCT-II, as `scipy.fftpack.dct` (type 2, no
//! normalisation: `y[k] = 2 * sum_n x[n] cos(pi k (2n + 1) / 2N)`) applied along axis 0 then
//! axis 1. Only the `K x K` corner is computed, by two small matrix products.

/// `basis[k][n]` for `k < K`, `n < N`.
fn basis<const K: usize, const N: usize>() -> [[f64; N]; K] {
    let mut b = [[0.0; N]; K];
    for (k, row) in b.iter_mut().enumerate() {
        for (n, v) in row.iter_mut().enumerate() {
            *v =
                2.0 * (std::f64::consts::PI * k as f64 * (2 * n + 1) as f64 / (2 * N) as f64).cos();
        }
    }
    b
}

/// `dct(dct(px, axis=0), axis=1)[:K, :K]` of an `N x N` row-major image.
pub fn dct2_corner<const K: usize, const N: usize>(px: &[u8]) -> [[f64; K]; K] {
    assert_eq!(px.len(), N * N, "image must be {N}x{N}");
    let c = basis::<K, N>();
    // Along axis 0 (down the columns): a[u][x] = sum_y c[u][y] px[y][x].
    let mut a = [[0.0f64; N]; K];
    for (u, au) in a.iter_mut().enumerate() {
        for (y, row) in px.chunks_exact(N).enumerate() {
            let cy = c[u][y];
            for (v, &p) in au.iter_mut().zip(row) {
                *v += cy * f64::from(p);
            }
        }
    }
    // Along axis 1: d[u][v] = sum_x a[u][x] c[v][x].
    let mut d = [[0.0f64; K]; K];
    for (du, au) in d.iter_mut().zip(&a) {
        for (dv, cv) in du.iter_mut().zip(&c) {
            *dv = au.iter().zip(cv).map(|(x, y)| x * y).sum();
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_image_has_only_dc() {
        let d = dct2_corner::<8, 32>(&[10u8; 1024]);
        // DC = 2N * 2N * value for scipy's unnormalised DCT-II.
        assert!((d[0][0] - 64.0 * 64.0 * 10.0).abs() < 1e-6);
        let rest: f64 = d.iter().flatten().skip(1).map(|v| v.abs()).sum();
        assert!(rest < 1e-6, "{rest}");
    }

    #[test]
    #[allow(clippy::needless_range_loop)] // index form mirrors the formula
    fn matches_direct_sum() {
        let px: Vec<u8> = (0..16 * 16)
            .map(|i| ((i * 37 + i / 16 * 11) % 251) as u8)
            .collect();
        let d = dct2_corner::<4, 16>(&px);
        for u in 0..4 {
            for v in 0..4 {
                let mut s = 0.0;
                for y in 0..16 {
                    for x in 0..16 {
                        let cu =
                            (std::f64::consts::PI * u as f64 * (2 * y + 1) as f64 / 32.0).cos();
                        let cv =
                            (std::f64::consts::PI * v as f64 * (2 * x + 1) as f64 / 32.0).cos();
                        s += 4.0 * cu * cv * f64::from(px[y * 16 + x]);
                    }
                }
                assert!((d[u][v] - s).abs() < 1e-6 * s.abs().max(1.0));
            }
        }
    }
}
