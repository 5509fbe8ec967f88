//! The block model's trees laid out complete (every leaf at the same depth) for scoring.
//!
//! Why: scoring walks 200 trees for every unit of every page, and the walk of the parsed trees (a leaf test
//! and a data-dependent branch at every node, children anywhere in the node list) was the largest single
//! cost of `blocks: model` in `perf` (about a third of the model's extra time over the rules). A complete
//! tree of depth `d` is walked with `d` steps of index arithmetic (`i = 2i + 1 + go_right`) and one leaf
//! read, with no leaf test and the tree's nodes adjacent. A leaf above the bottom is padded: the splits
//! under it are placeholders and every bottom leaf below it holds its value, so any path from it ends there.
//! Measured on the shipped model, 200,000 rows of random features, one thread: the node walk 0.97-1.15 s,
//! the complete trees 0.43-0.57 s (two rounds each; walking 8 rows through each tree together gained 0-15 %
//! more and was left out).
//!
//! The sum is the same as the node walk's, in the same order, to the bit: each split compares the same
//! single-precision feature with the same split value (`x <= t` goes left, so a NaN goes right as before),
//! and the leaf values are the same `f32`s added to an `f64` in tree order.
//!
//! The answer the kernel needs is only whether a unit's logit reaches a threshold ([`Forest::reaches`]):
//! every 10 trees, if the smallest (largest) leaves of the trees left cannot bring the sum below (up to) the
//! threshold, the answer is known. On the 947 pages of `../shared/data` (160,000 units), that scores 134-156
//! of the 200 trees per unit on average in balanced mode (outside / inside the rules region; a unit near the
//! threshold still takes all of them), and the trees' share of the kernel's samples in `perf` fell from 16 %
//! to 10 %. Walking 4 trees in lockstep for one unit (more loads in flight) changed nothing measurable and was
//! left out.

/// Trees deeper than this keep the node walk: a complete tree holds `2^depth` leaves.
pub const MAX_DEPTH: usize = 12;

/// Complete trees of one depth: per tree, `2^depth - 1` splits then `2^depth` leaves.
#[derive(Debug, Clone)]
pub struct Forest {
    depth: usize,
    features: Vec<u16>,
    splits: Vec<f32>,
    leaves: Vec<f32>,
    /// For every [`CHECK`]-th tree `c * CHECK`: the least and the most the trees from it on can add.
    rest: Vec<(f64, f64)>,
}

/// How often [`Forest::reaches`] asks whether the trees left can still change the answer.
const CHECK: usize = 10;

/// Slack for the rounding of the sum: `s + rest` is the exact sum of the leaves left, the scored sum adds them
/// one by one in `f64` (at most a few hundred additions of values of magnitude < 100, error < 1e-11).
const ROUNDING: f64 = 1e-9;

/// One node of a parsed tree, as [`Forest::build`] reads it: a split (feature, value, left, right) or a leaf.
pub enum Walk {
    Split(u16, f32, usize, usize),
    Leaf(f32),
}

impl Forest {
    /// The complete form of the trees whose roots are `roots`; `node(i)` reads node `i`. `None` when a tree
    /// is deeper than [`MAX_DEPTH`].
    pub fn build(roots: &[usize], node: impl Fn(usize) -> Walk) -> Option<Forest> {
        // Stops below MAX_DEPTH: a model file may point two splits at one node (children only point forward,
        // so every walk ends), and the paths of such a file can be exponentially many.
        let depth_of = |root: usize| -> usize {
            let mut stack = vec![(root, 0usize)];
            let mut deepest = 0;
            while let Some((i, d)) = stack.pop() {
                match node(i) {
                    _ if d > MAX_DEPTH => return d,
                    Walk::Leaf(_) => deepest = deepest.max(d),
                    Walk::Split(_, _, l, r) => stack.extend([(l, d + 1), (r, d + 1)]),
                }
            }
            deepest
        };
        let depth = roots.iter().map(|&r| depth_of(r)).max().unwrap_or(0);
        if depth > MAX_DEPTH {
            return None;
        }
        let inner = (1usize << depth) - 1;
        let mut forest = Forest {
            depth,
            features: vec![0; inner * roots.len()],
            splits: vec![0.0; inner * roots.len()],
            leaves: vec![0.0; (inner + 1) * roots.len()],
            rest: Vec::new(),
        };
        for (t, &root) in roots.iter().enumerate() {
            // (node of the parsed tree, position in the complete one)
            let mut stack = vec![(root, 0usize)];
            while let Some((i, pos)) = stack.pop() {
                if pos >= inner {
                    let Walk::Leaf(v) = node(i) else {
                        unreachable!("a split below the deepest leaf")
                    };
                    forest.leaves[t * (inner + 1) + pos - inner] = v;
                    continue;
                }
                let (l, r) = match node(i) {
                    Walk::Split(f, v, l, r) => {
                        forest.features[t * inner + pos] = f;
                        forest.splits[t * inner + pos] = v;
                        (l, r)
                    }
                    Walk::Leaf(_) => (i, i), // padding: both sides lead to this leaf
                };
                stack.extend([(l, 2 * pos + 1), (r, 2 * pos + 2)]);
            }
        }
        let bounds: Vec<(f64, f64)> = forest
            .leaves
            .chunks_exact(inner + 1)
            .map(|l| {
                let lo = l.iter().fold(f32::INFINITY, |a, &b| a.min(b));
                let hi = l.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
                (f64::from(lo), f64::from(hi))
            })
            .collect();
        // a file with a leaf that is not finite has no bounds: its sums are scored whole
        let finite = bounds
            .iter()
            .all(|(lo, hi)| lo.is_finite() && hi.is_finite());
        forest.rest = (0..if finite { bounds.len() } else { 0 })
            .step_by(CHECK)
            .map(|from| {
                bounds[from..]
                    .iter()
                    .fold((0.0, 0.0), |(lo, hi), &(a, b)| (lo + a, hi + b))
            })
            .collect();
        Some(forest)
    }

    /// `base` plus every tree's leaf for `x`.
    pub fn score(&self, base: f64, x: &[f32]) -> f64 {
        self.sum(base, x, 0, self.trees())
    }

    /// Whether `score(base, x) >= threshold`, scoring only as many trees as it takes to know: every
    /// [`CHECK`] trees, the least and the most the remaining trees can add (their smallest and largest leaves)
    /// either settle the answer or the scoring goes on. Why: the model's answer is only ever compared with a
    /// threshold, and most units (navigation, boilerplate, the article's body) are far from it; their answer is
    /// known long before the 200th tree. Exact: an answer within [`ROUNDING`] of the threshold is settled by the
    /// full sum.
    pub fn reaches(&self, base: f64, x: &[f32], threshold: f64) -> bool {
        let mut s = base;
        for (c, &(lo, hi)) in self.rest.iter().enumerate() {
            if s + lo - ROUNDING >= threshold {
                return true;
            }
            if s + hi + ROUNDING < threshold {
                return false;
            }
            let from = c * CHECK;
            s = self.sum(s, x, from, (from + CHECK).min(self.trees()));
        }
        self.sum(
            s,
            x,
            (self.rest.len() * CHECK).min(self.trees()),
            self.trees(),
        ) >= threshold
    }

    fn trees(&self) -> usize {
        self.leaves.len() >> self.depth
    }

    /// `s` plus the leaves of trees `from..to` for `x`, in tree order.
    fn sum(&self, s: f64, x: &[f32], from: usize, to: usize) -> f64 {
        let inner = (1usize << self.depth) - 1;
        let mut s = s;
        let all = self.leaves[from * (inner + 1)..to * (inner + 1)].chunks_exact(inner + 1);
        for (t, leaves) in (from..).zip(all) {
            let (features, splits) = (
                &self.features[t * inner..(t + 1) * inner],
                &self.splits[t * inner..(t + 1) * inner],
            );
            let mut pos = 0usize;
            for _ in 0..self.depth {
                // not `>`: a NaN feature goes right, as in the node walk
                #[allow(clippy::neg_cmp_op_on_partial_ord)]
                let right = !(x[features[pos] as usize] <= splits[pos]);
                pos = 2 * pos + 1 + usize::from(right);
            }
            s += f64::from(leaves[pos - inner]);
        }
        s
    }
}
