//! fastText's two matrix kinds, read-only: a dense `rows x cols` float32 matrix (`DenseMatrix`, read in place
//! from the memory-mapped file) and a product-quantized one (`QuantMatrix` of a `.ftz`: one byte code per
//! sub-vector, 256 centroids per sub-quantizer, and optionally a quantized norm per row).
//!
//! The arithmetic follows fastText's order (float32, left to right) so that scores match its own predict to
//! the last bits; a dot product is a short loop next to the row additions that dominate a prediction.

use std::sync::Arc;

use super::read::{Backing, Reader};
use crate::error::{KResult, KernelError};

/// Centroids per sub-quantizer (fastText's `ksub_ = 1 << nbits_`, `nbits_ = 8`).
const KSUB: usize = 256;

/// A dense matrix whose float32 values stay in the model file (little-endian, possibly unaligned).
#[derive(Debug)]
pub struct Dense {
    bytes: Arc<Backing>,
    start: usize,
    rows: usize,
    cols: usize,
}

/// A product quantizer: `nsubq` sub-vectors of `dsub` values (the last one `lastdsub`).
#[derive(Debug)]
pub struct ProductQuantizer {
    nsubq: usize,
    dsub: usize,
    lastdsub: usize,
    centroids: Vec<f32>,
}

/// A quantized matrix: `codes[row * nsubq + m]` picks sub-vector `m`'s centroid; `norms` scales each row.
#[derive(Debug)]
pub struct Quant {
    rows: usize,
    cols: usize,
    codes: Vec<u8>,
    pq: ProductQuantizer,
    norms: Option<(Vec<u8>, ProductQuantizer)>,
}

#[derive(Debug)]
pub enum Matrix {
    Dense(Dense),
    Quant(Quant),
}

fn damaged(what: &str) -> KernelError {
    KernelError::value(format!("damaged model file: {what}"))
}

fn dims(r: &mut Reader<'_>) -> KResult<(usize, usize)> {
    let (m, n) = (r.i64()?, r.i64()?);
    match (usize::try_from(m), usize::try_from(n)) {
        (Ok(m), Ok(n)) if m.checked_mul(n).is_some_and(|s| s < (1 << 40)) => Ok((m, n)),
        _ => Err(damaged(&format!("matrix of {m} x {n}"))),
    }
}

impl Dense {
    /// `DenseMatrix::load`: int64 rows, int64 cols, then the values row-major (left in the file).
    pub fn load(r: &mut Reader<'_>, bytes: &Arc<Backing>) -> KResult<Self> {
        let (rows, cols) = dims(r)?;
        let start = r.pos();
        r.bytes(rows * cols * 4, "matrix values")?;
        Ok(Self {
            bytes: Arc::clone(bytes),
            start,
            rows,
            cols,
        })
    }

    #[inline]
    fn row(&self, i: usize) -> &[u8] {
        let at = self.start + i * self.cols * 4;
        &self.bytes[at..at + self.cols * 4]
    }
}

#[inline]
fn f32s(b: &[u8]) -> impl Iterator<Item = f32> + '_ {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

impl ProductQuantizer {
    /// `ProductQuantizer::load`: int32 dim, nsubq, dsub, lastdsub, then `dim * 256` float32 centroids.
    fn load(r: &mut Reader<'_>, want_dim: usize) -> KResult<Self> {
        let (dim, nsubq, dsub, lastdsub) = (r.i32()?, r.i32()?, r.i32()?, r.i32()?);
        let ok = dim > 0 && nsubq > 0 && dsub > 0 && lastdsub > 0 && lastdsub <= dsub;
        let (dim, nsubq, dsub, lastdsub) = (
            dim as usize,
            nsubq as usize,
            dsub as usize,
            lastdsub as usize,
        );
        if !ok || dim != want_dim || (nsubq - 1) * dsub + lastdsub != dim {
            return Err(damaged(&format!(
                "product quantizer of dim {dim}, {nsubq} x {dsub} (last {lastdsub}) for vectors of {want_dim}"
            )));
        }
        let centroids = f32s(r.bytes(dim * KSUB * 4, "centroids")?).collect();
        Ok(Self {
            nsubq,
            dsub,
            lastdsub,
            centroids,
        })
    }

    /// `get_centroids(m, code)`: the centroid of sub-quantizer `m` (the last one is `lastdsub` long).
    #[inline]
    fn centroid(&self, m: usize, code: u8) -> &[f32] {
        let c = code as usize;
        if m == self.nsubq - 1 {
            let at = m * KSUB * self.dsub + c * self.lastdsub;
            &self.centroids[at..at + self.lastdsub]
        } else {
            let at = (m * KSUB + c) * self.dsub;
            &self.centroids[at..at + self.dsub]
        }
    }
}

impl Quant {
    /// `QuantMatrix::load`: bool qnorm, int64 rows, int64 cols, int32 code size, codes, the quantizer, then
    /// (qnorm) one norm code per row and the norms' one-dimensional quantizer.
    pub fn load(r: &mut Reader<'_>) -> KResult<Self> {
        let qnorm = r.u8()? != 0;
        let (rows, cols) = dims(r)?;
        let codesize = usize::try_from(r.i32()?).map_err(|_| damaged("negative code size"))?;
        let codes = r.bytes(codesize, "codes")?.to_vec();
        let pq = ProductQuantizer::load(r, cols)?;
        if codesize != rows * pq.nsubq {
            return Err(damaged(&format!(
                "{codesize} codes for {rows} rows of {} sub-vectors",
                pq.nsubq
            )));
        }
        let norms = if qnorm {
            let codes = r.bytes(rows, "norm codes")?.to_vec();
            Some((codes, ProductQuantizer::load(r, 1)?))
        } else {
            None
        };
        Ok(Self {
            rows,
            cols,
            codes,
            pq,
            norms,
        })
    }

    #[inline]
    fn norm(&self, i: usize) -> f32 {
        self.norms
            .as_ref()
            .map_or(1.0, |(codes, npq)| npq.centroid(0, codes[i])[0])
    }

    #[inline]
    fn code(&self, i: usize) -> &[u8] {
        &self.codes[i * self.pq.nsubq..(i + 1) * self.pq.nsubq]
    }
}

impl Matrix {
    pub fn rows(&self) -> usize {
        match self {
            Self::Dense(d) => d.rows,
            Self::Quant(q) => q.rows,
        }
    }

    pub fn cols(&self) -> usize {
        match self {
            Self::Dense(d) => d.cols,
            Self::Quant(q) => q.cols,
        }
    }

    /// `x += row i` (`addRowToVector`; quantized: each centroid times the row's norm).
    #[inline]
    pub fn add_row(&self, x: &mut [f32], i: usize) {
        match self {
            Self::Dense(d) => {
                for (xj, v) in x.iter_mut().zip(f32s(d.row(i))) {
                    *xj += v;
                }
            }
            Self::Quant(q) => {
                let alpha = q.norm(i);
                let pq = &q.pq;
                for (m, &code) in q.code(i).iter().enumerate() {
                    let out = &mut x[m * pq.dsub..];
                    for (xj, c) in out.iter_mut().zip(pq.centroid(m, code)) {
                        *xj += alpha * c;
                    }
                }
            }
        }
    }

    /// `row i . x` (`dotRow`; quantized: `mulcode`, the sum times the row's norm).
    #[inline]
    pub fn dot_row(&self, x: &[f32], i: usize) -> f32 {
        match self {
            Self::Dense(d) => {
                let mut s = 0.0f32;
                for (xj, v) in x.iter().zip(f32s(d.row(i))) {
                    s += v * xj;
                }
                s
            }
            Self::Quant(q) => {
                let pq = &q.pq;
                let mut s = 0.0f32;
                for (m, &code) in q.code(i).iter().enumerate() {
                    for (xj, c) in x[m * pq.dsub..].iter().zip(pq.centroid(m, code)) {
                        s += xj * c;
                    }
                }
                s * q.norm(i)
            }
        }
    }
}
