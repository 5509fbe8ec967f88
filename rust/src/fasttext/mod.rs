//! Supervised fastText models (`.bin`, quantized `.ftz`, fastText 0.9 format) and their predict, in plain Rust
//! so a batch is scored on the kernel pool without the GIL (fastText's Python bindings hold it for every
//! call). Scores equal fastText's `predict(line, k=-1, threshold=0.0)`: same tokens, same hashed features,
//! same float32 arithmetic in the same order, same output layer (`loss.rs`).
//!
//! The file is memory-mapped and a dense input matrix is read in place, so a multi-gigabyte model costs its
//! pages once per machine's page cache, and a process loads it once for all its threads (the binding keeps
//! the model behind an `Arc`).

mod dict;
#[cfg(test)]
mod load_tests;
mod loss;
mod matrix;
mod read;

use std::sync::Arc;

use crate::columns::BytesColumn;
use crate::error::{KResult, KernelError};

pub use dict::{hash, read_word, EOS};
use dict::{Dictionary, Hashing, Scratch};
use loss::{Output, Scored};
use matrix::{Dense, Matrix, Quant};
use read::{Backing, Reader};

const MAGIC: i32 = 793_712_314;
const VERSION: i32 = 12;
const SUPERVISED: i32 = 3;

/// A loaded supervised model.
#[derive(Debug)]
pub struct Model {
    pub dim: usize,
    pub loss: &'static str,
    dict: Dictionary,
    input: Matrix,
    output: Matrix,
    layer: Output,
}

/// Per-thread buffers of a prediction.
pub struct State {
    features: Vec<i32>,
    scratch: Scratch,
    hidden: Vec<f32>,
    out: Vec<f32>,
    pub heap: Scored,
}

fn bad(msg: String) -> KernelError {
    KernelError::value(msg)
}

impl Model {
    /// Map and read the model file at `path`.
    pub fn load(path: &str) -> KResult<Self> {
        Self::from_backing(Arc::new(Backing::map(path)?))
    }

    /// A model from the bytes of its file (tests, and files read by other means).
    pub fn from_bytes(bytes: Vec<u8>) -> KResult<Self> {
        Self::from_backing(Arc::new(Backing::Owned(bytes)))
    }

    /// `FastText::loadModel`: magic and version, the arguments, the dictionary, the input matrix (quantized
    /// or not), then the output matrix (quantized when `qout`).
    fn from_backing(bytes: Arc<Backing>) -> KResult<Self> {
        let mut r = Reader::new(&bytes);
        if bytes.len() < 8 || r.i32()? != MAGIC {
            return Err(bad(
                "not a fastText model (no fastText magic number at its start)".into(),
            ));
        }
        let version = r.i32()?;
        if version > VERSION {
            return Err(bad(format!(
                "written by a fastText newer than 0.9 (format version {version})"
            )));
        }
        // Args::load: 12 int32 (dim ws epoch minCount neg wordNgrams loss model bucket minn maxn
        // lrUpdateRate), then a double (t)
        let mut a = [0i32; 12];
        for v in &mut a {
            *v = r.i32()?;
        }
        r.f64()?;
        let [dim, _ws, _epoch, _min_count, _neg, word_ngrams, loss, model, bucket, minn, maxn, _] =
            a;
        if model != SUPERVISED {
            return Err(bad(format!(
                "an unsupervised fastText model (model {model}: word vectors, no labels)"
            )));
        }
        // old supervised models (format 11) did not use character n-grams
        let maxn = if version == 11 { 0 } else { maxn };
        let hashing = Hashing {
            minn,
            maxn,
            bucket,
            word_ngrams,
        };
        let dict = Dictionary::load(&mut r, hashing)?;
        let quant_input = r.u8()? != 0;
        let input = if quant_input {
            Matrix::Quant(Quant::load(&mut r)?)
        } else {
            if dict.is_pruned() {
                return Err(bad(
                    "a pruned dictionary without a quantized matrix (fastText refuses it too)"
                        .into(),
                ));
            }
            Matrix::Dense(Dense::load(&mut r, &bytes)?)
        };
        let qout = r.u8()? != 0;
        let output = if quant_input && qout {
            Matrix::Quant(Quant::load(&mut r)?)
        } else {
            Matrix::Dense(Dense::load(&mut r, &bytes)?)
        };
        let (layer, name) = match loss {
            1 => (Output::hierarchical(&dict.counts), "hs"),
            2 => (Output::sigmoid(), "ns"),
            3 => (Output::softmax(), "softmax"),
            4 => (Output::sigmoid(), "ova"),
            other => return Err(bad(format!("damaged model file: unknown loss {other}"))),
        };
        let m = Self {
            dim: usize::try_from(dim).unwrap_or(0),
            loss: name,
            dict,
            input,
            output,
            layer,
        };
        m.check_shapes(bucket)?;
        Ok(m)
    }

    /// Every feature id a line can produce must be a row of the input matrix, every label a row of the
    /// output (a damaged file is an error here, never an out-of-bounds read later).
    fn check_shapes(&self, bucket: i32) -> KResult<()> {
        let d = &self.dict;
        let hashed_rows = if d.is_pruned() {
            d.pruned_rows().map(|v| v as i64 + 1).max().unwrap_or(0)
        } else {
            i64::from(bucket.max(0))
        };
        let need_in = d.nwords as i64 + hashed_rows;
        let ok = self.dim > 0
            && d.nlabels > 0
            && d.pruned_rows().all(|v| v >= 0)
            && self.input.rows() as i64 >= need_in
            && self.input.cols() == self.dim
            && self.output.cols() == self.dim
            && self.output.rows() == d.nlabels;
        if ok {
            return Ok(());
        }
        Err(bad(format!(
            "damaged model file: input matrix {} x {} and output {} x {} for {} words + {hashed_rows} hashed rows, \
             {} labels, dimension {}",
            self.input.rows(),
            self.input.cols(),
            self.output.rows(),
            self.output.cols(),
            d.nwords,
            d.nlabels,
            self.dim
        )))
    }

    /// Label names as in the file (with their `__label__` prefix), in label-index order.
    pub fn labels(&self) -> Vec<String> {
        self.dict
            .label_names()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect()
    }

    pub fn nlabels(&self) -> usize {
        self.dict.nlabels
    }

    pub fn state(&self) -> State {
        State {
            features: Vec::new(),
            scratch: Scratch {
                hashes: Vec::new(),
                word: Vec::new(),
            },
            hidden: vec![0.0; self.dim],
            out: Vec::with_capacity(self.dict.nlabels),
            heap: Vec::with_capacity(self.dict.nlabels),
        }
    }

    /// `predictLine(text, k=-1, threshold=0)`: `s.heap` holds `(log p, label)` best first; false (and an
    /// empty heap) when the line has no feature at all (fastText returns no prediction then). `whole`:
    /// `text` is one line, newlines read as spaces ([`dict::Dictionary::line`]).
    pub fn predict(&self, text: &[u8], s: &mut State, whole: bool) -> bool {
        s.heap.clear();
        self.dict.line(text, &mut s.features, &mut s.scratch, whole);
        if s.features.is_empty() {
            return false;
        }
        // computeHidden: the rows' sum in line order, times the float 1/n
        s.hidden.fill(0.0);
        for &id in &s.features {
            self.input.add_row(&mut s.hidden, id as usize);
        }
        let scale = (1.0 / s.features.len() as f64) as f32;
        for v in &mut s.hidden {
            *v *= scale;
        }
        self.layer
            .predict(&self.output, &s.hidden, &mut s.out, &mut s.heap);
        !s.heap.is_empty()
    }

    /// Predict every row of `lines` (in parallel on the current pool): for each, the probability of each of
    /// `labels` (0 for a label fastText did not return) and the most probable label; `None` for a null row
    /// or one without prediction.
    pub fn predict_column(
        &self,
        lines: &BytesColumn,
        labels: &[usize],
        whole: bool,
    ) -> Vec<Option<(Box<[f32]>, u32)>> {
        let mut slot = vec![usize::MAX; self.nlabels()];
        for (j, &l) in labels.iter().enumerate() {
            slot[l] = j;
        }
        lines.par_map(
            || self.state(),
            |s, text| {
                if !self.predict(text?, s, whole) {
                    return None;
                }
                let mut probs = vec![0.0f32; labels.len()].into_boxed_slice();
                for &(score, label) in &s.heap {
                    if let Some(p) = probs.get_mut(slot[label as usize]) {
                        *p = score.exp();
                    }
                }
                Some((probs, s.heap[0].1 as u32))
            },
        )
    }
}
