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
//! region <inside> <outside>             optional: logit offsets for units inside / outside the rules' region
//! base <logit>
//! tree <nodes>                          then <nodes> lines, node 0 the root:
//! <feature> <threshold> <left> <right>  a split: x[feature] <= threshold goes left
//! leaf <value>                          a leaf: adds value to the logit
//! ```
//!
//! A unit's probability is `sigmoid(base + sum of its leaves)`; it is kept when that reaches the threshold
//! of the favor mode, lowered by `inside` for a unit in the rules' region (written by Readability's rules, or
//! under a parent or grandparent whose text they partly write) and raised by `outside` for any other unit.
//! Why the region: held out by site, the model alone finds more of the article on many-language pages than the
//! rules, but also keeps boxes and lists far from it; the offsets keep its gains near the rules' choice and
//! ask much more of a unit elsewhere (`benchmarks/train_html_blocks.py --combine` prints the grid they were
//! chosen from; a file without the line is the model alone). Thresholds compare single-precision features with single-precision split values, as
//! the trainer does, so the kernel and the trainer agree on every split.

use std::sync::OnceLock;

use super::features::{FEATURES, N};
use super::forest::{Forest, Walk};
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
    /// Logit offsets: subtracted inside the rules' region, added outside it.
    region: [f64; 2],
    /// The trees laid out complete, for [`Model::score`] (`None`: too deep; the node walk scores).
    forest: Option<Forest>,
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
        let (mut n, mut base) = next("the base")?;
        let mut region = [0.0, 0.0];
        if let Some(rest) = base.strip_prefix("region ") {
            let r: Vec<&str> = rest.split_whitespace().collect();
            if r.len() != 2 {
                return Err(bad(n, "expected `region <inside> <outside>`"));
            }
            region = [num(r[0], n)?, num(r[1], n)?];
            (n, base) = next("the base")?;
        }
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
            region,
            forest: None,
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
        let roots: Vec<usize> = model.roots.iter().map(|&r| r as usize).collect();
        model.forest = Forest::build(&roots, |i| {
            let n = model.nodes[i];
            if n.feature == LEAF {
                Walk::Leaf(n.value)
            } else {
                Walk::Split(n.feature, n.value, n.left as usize, n.right as usize)
            }
        });
        Ok(model)
    }

    /// The unit's logit.
    pub fn score(&self, x: &[f32; N]) -> f64 {
        match &self.forest {
            Some(forest) => forest.score(self.base, x),
            None => self.walk(x),
        }
    }

    /// Whether the unit's logit reaches `threshold`: `score(x) >= threshold`, with no more trees scored than
    /// it takes to know ([`Forest::reaches`]).
    pub fn reaches(&self, x: &[f32; N], threshold: f64) -> bool {
        match &self.forest {
            Some(forest) => forest.reaches(self.base, x, threshold),
            None => self.walk(x) >= threshold,
        }
    }

    /// The unit's logit by walking the parsed trees (the reference [`Forest`] must equal).
    pub fn walk(&self, x: &[f32; N]) -> f64 {
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

    /// The logit a unit must reach under `favor`, `in_region` or not (see the module's docs).
    pub fn threshold(&self, favor: Favor, in_region: bool) -> f64 {
        let t = match favor {
            Favor::Precision => self.thresholds[0],
            Favor::Balanced => self.thresholds[1],
            Favor::Recall => self.thresholds[2],
        };
        if in_region {
            t - self.region[0]
        } else {
            t + self.region[1]
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The complete trees give the node walk's logit to the bit on the shipped model, for feature vectors
    /// drawn from its own split values (ties at every split), their neighbours, NaN and infinities. Seen red
    /// with the padding leaves left at 0 (a tree shorter than the deepest lost its leaf's value).
    #[test]
    fn complete_trees_score_as_the_walk() {
        let m = shipped();
        assert!(m.forest.is_some(), "the shipped trees fit MAX_DEPTH");
        for x in drawn(m, 20_000) {
            assert_eq!(m.score(&x).to_bits(), m.walk(&x).to_bits(), "{x:?}");
        }
    }

    /// `n` feature vectors for `m`: values drawn from its own split values (ties at every split), their next
    /// float, one below, NaN and infinities.
    fn drawn(m: &Model, n: usize) -> Vec<[f32; N]> {
        let splits: Vec<f32> = m
            .nodes
            .iter()
            .filter(|n| n.feature != LEAF)
            .map(|n| n.value)
            .collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        (0..n)
            .map(|_| {
                let mut x = [0f32; N];
                for v in &mut x {
                    let r = next();
                    let s = splits[(r >> 8) as usize % splits.len()];
                    *v = match r % 16 {
                        0 => f32::NAN,
                        1 => f32::INFINITY,
                        2 => f32::NEG_INFINITY,
                        3..=7 => s,
                        8..=11 => f32::from_bits(s.to_bits().wrapping_add(1)),
                        _ => s - 1.0,
                    };
                }
                x
            })
            .collect()
    }

    /// The early exit answers as the full sum does, for thresholds at the score itself, the floats on either
    /// side of it, near and far from it, and the shipped model's own thresholds. Seen red with the bounds of
    /// the remaining trees taken at half their width (an answer settled too early).
    #[test]
    fn reaches_answers_as_the_full_score() {
        let m = shipped();
        let own: Vec<f64> = [Favor::Precision, Favor::Balanced, Favor::Recall]
            .iter()
            .flat_map(|&f| [m.threshold(f, true), m.threshold(f, false)])
            .collect();
        for x in drawn(m, 20_000) {
            let s = m.walk(&x);
            let near = [
                s,
                s.next_down(),
                s.next_up(),
                s - 0.3,
                s + 0.3,
                s - 3.0,
                s + 3.0,
            ];
            for t in near.into_iter().chain(own.iter().copied()) {
                assert_eq!(m.reaches(&x, t), s >= t, "score {s}, threshold {t}");
            }
        }
        // a leaf that is not finite: no bounds, every tree scored (a NaN sum reaches nothing)
        let features = FEATURES.join(" ");
        for (leaf, reaches) in [("NaN", false), ("inf", true), ("-inf", false)] {
            let text = format!(
                "mdf-html-blocks 1\nfeatures {N} {features}\nthresholds 0.5 0.5 0.5\nbase 0.0\n\
                 tree 1\nleaf 100.0\ntree 3\n0 0.5 1 2\nleaf {leaf}\nleaf {leaf}\n"
            );
            let m = Model::parse(&text).expect("parses");
            assert!(m.forest.is_some());
            assert_eq!(m.reaches(&[0.0; N], 1.0), reaches, "leaf {leaf}");
        }
    }

    /// A file whose splits share children (here 60 splits, each sending both sides to the next: 2^60 paths)
    /// parses at once and scores by the node walk. Seen red without the depth cap in `Forest::build`: the
    /// parse did not finish (it counted every path).
    #[test]
    fn shared_children_do_not_blow_up_the_layout() {
        let features = FEATURES.join(" ");
        let mut text = format!("mdf-html-blocks 1\nfeatures {N} {features}\nthresholds 0.5 0.5 0.5\nbase 0.0\ntree 61\n");
        for i in 1..=60 {
            text.push_str(&format!("0 0.5 {i} {i}\n"));
        }
        text.push_str("leaf 1.5\n");
        let m = Model::parse(&text).expect("parses");
        assert!(m.forest.is_none());
        assert_eq!(m.score(&[0.0; N]), 1.5);
    }
}
