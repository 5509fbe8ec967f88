//! The block model: a small ensemble of regression trees over a unit's [`FEATURES`], trained offline by
//! `benchmarks/train_html_blocks.py` (gradient boosting on the log loss) and shipped as the text file
//! `blocks.model` beside this module, compiled in with `include_str!`.
//!
//! File format (text, one item a line, so a retrained model reads as a diff):
//!
//! ```text
//! mdf-html-blocks 1
//! features <n> <name> ... <name>       the feature names, in the kernel's order (checked)
//! thresholds <precision> <balanced> <recall>   probabilities a unit must reach in each favor mode
//! base <logit>
//! tree <nodes>                          then <nodes> lines, node 0 the root:
//! <feature> <threshold> <left> <right>  a split: x[feature] <= threshold goes left
//! leaf <value>                          a leaf: adds value to the logit
//! ```
//!
//! A unit's probability is `sigmoid(base + sum of its leaves)`; it is kept when that reaches the threshold
//! of the favor mode. Thresholds compare single-precision features with single-precision split values, as
//! the trainer does, so the kernel and the trainer agree on every split.

use std::sync::OnceLock;

use super::features::{FEATURES, N};
use crate::html::Favor;

const LEAF: u16 = u16::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    feature: u16,
    left: u32,
    right: u32,
    /// Split value, or the leaf's value.
    value: f32,
}

/// A parsed block model.
#[derive(Debug, Clone)]
pub struct Model {
    nodes: Vec<Node>,
    roots: Vec<u32>,
    base: f64,
    /// Logit thresholds: precision, balanced, recall.
    thresholds: [f64; 3],
}

fn logit(p: f64) -> f64 {
    let p = p.clamp(1e-9, 1.0 - 1e-9);
    (p / (1.0 - p)).ln()
}

fn bad(line: usize, what: &str) -> String {
    format!("block model, line {}: {what}", line + 1)
}

impl Model {
    /// Parse a model file; the error says which line is wrong and why.
    pub fn parse(text: &str) -> Result<Model, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let mut next = |what: &str| {
            lines
                .next()
                .ok_or_else(|| format!("block model: ends before {what}"))
        };
        let (n, head) = next("the header")?;
        if head.trim() != "mdf-html-blocks 1" {
            return Err(bad(
                n,
                "not an mdf block model (expected `mdf-html-blocks 1`)",
            ));
        }
        let (n, feats) = next("the feature names")?;
        let names: Vec<&str> = feats.split_whitespace().skip(2).collect();
        if !feats.starts_with("features ") || names != FEATURES {
            return Err(bad(
                n,
                "its features are not this kernel's: retrain it with benchmarks/train_html_blocks.py",
            ));
        }
        let num = |s: &str, n: usize| {
            s.parse::<f64>()
                .map_err(|_| bad(n, &format!("`{s}` is not a number")))
        };
        let (n, th) = next("the thresholds")?;
        let th: Vec<&str> = th.split_whitespace().collect();
        if th.len() != 4 || th[0] != "thresholds" {
            return Err(bad(
                n,
                "expected `thresholds <precision> <balanced> <recall>`",
            ));
        }
        let thresholds = [
            logit(num(th[1], n)?),
            logit(num(th[2], n)?),
            logit(num(th[3], n)?),
        ];
        let (n, base) = next("the base")?;
        let base = num(
            base.strip_prefix("base ")
                .ok_or_else(|| bad(n, "expected `base <logit>`"))?,
            n,
        )?;
        let mut model = Model {
            nodes: Vec::new(),
            roots: Vec::new(),
            base,
            thresholds,
        };
        while let Some((n, line)) = lines.next() {
            let count: usize = line
                .strip_prefix("tree ")
                .and_then(|c| c.trim().parse().ok())
                .ok_or_else(|| bad(n, "expected `tree <nodes>`"))?;
            let start = model.nodes.len() as u32;
            model.roots.push(start);
            for _ in 0..count {
                let (n, line) = lines.next().ok_or_else(|| bad(n, "the tree ends early"))?;
                let f: Vec<&str> = line.split_whitespace().collect();
                let node = match f.as_slice() {
                    ["leaf", v] => Node {
                        feature: LEAF,
                        left: 0,
                        right: 0,
                        value: num(v, n)? as f32,
                    },
                    [feat, thr, l, r] => {
                        let feature: u16 = feat.parse().map_err(|_| bad(n, "bad feature index"))?;
                        let child = |s: &str| -> Result<u32, String> {
                            let c: u32 = s.parse().map_err(|_| bad(n, "bad child index"))?;
                            if c as usize >= count || c == 0 {
                                return Err(bad(n, "child index outside its tree"));
                            }
                            Ok(start + c)
                        };
                        if feature as usize >= N {
                            return Err(bad(n, "feature index past the feature list"));
                        }
                        Node {
                            feature,
                            left: child(l)?,
                            right: child(r)?,
                            value: thr.parse::<f32>().map_err(|_| bad(n, "bad threshold"))?,
                        }
                    }
                    _ => {
                        return Err(bad(
                            n,
                            "expected `leaf <value>` or `<feature> <threshold> <left> <right>`",
                        ))
                    }
                };
                model.nodes.push(node);
            }
        }
        // children point forward only (checked below), so every walk ends at a leaf
        for (i, node) in model.nodes.iter().enumerate() {
            if node.feature != LEAF && (node.left as usize <= i || node.right as usize <= i) {
                return Err("block model: a split points back up its tree".to_owned());
            }
        }
        Ok(model)
    }

    /// The unit's logit.
    pub fn score(&self, x: &[f32; N]) -> f64 {
        let mut s = self.base;
        for &root in &self.roots {
            let mut i = root as usize;
            loop {
                let node = &self.nodes[i];
                if node.feature == LEAF {
                    s += f64::from(node.value);
                    break;
                }
                i = if x[node.feature as usize] <= node.value {
                    node.left
                } else {
                    node.right
                } as usize;
            }
        }
        s
    }

    /// The logit a unit must reach under `favor`.
    pub fn threshold(&self, favor: Favor) -> f64 {
        match favor {
            Favor::Precision => self.thresholds[0],
            Favor::Balanced => self.thresholds[1],
            Favor::Recall => self.thresholds[2],
        }
    }
}

/// The text of the model shipped with the kernel (`blocks.model`).
pub const SHIPPED: &str = include_str!("blocks.model");

/// The model shipped with the kernel, parsed on first use.
pub fn shipped() -> &'static Model {
    static M: OnceLock<Model> = OnceLock::new();
    M.get_or_init(|| Model::parse(SHIPPED).expect("the shipped block model parses"))
}
