//! The output layer of a supervised model at predict time, as fastText computes it with `k = -1` (every
//! label) and threshold 0: softmax, one-vs-all / negative sampling (sigmoid per label through fastText's
//! 512-entry table), or hierarchical softmax (a depth-first walk of the Huffman tree over label counts that
//! drops paths below `log(1e-5)`, so those labels get no probability at all). Scores are `log(p + 1e-5)`
//! kept in libstdc++'s heap order, so equal scores come out in the order fastText's `sort_heap` gives them.

use super::matrix::Matrix;

const SIGMOID_TABLE_SIZE: usize = 512;
const MAX_SIGMOID: f32 = 8.0;

/// `(log-probability, label)` pairs, as fastText's `Predictions`.
pub type Scored = Vec<(f32, i32)>;

/// fastText's `std_log`: `log(x + 1e-5)` in double, returned as float.
#[inline]
pub fn std_log(x: f32) -> f32 {
    (f64::from(x) + 1e-5).ln() as f32
}

/// fastText's `comparePairs`: the heap is a min-heap on the score.
#[inline]
fn before(a: &(f32, i32), b: &(f32, i32)) -> bool {
    a.0 > b.0
}

/// libstdc++'s `__push_heap`: move `value` up from `hole` towards `top`.
fn sift_up(h: &mut [(f32, i32)], mut hole: usize, top: usize, value: (f32, i32)) {
    while hole > top {
        let parent = (hole - 1) / 2;
        if !before(&h[parent], &value) {
            break;
        }
        h[hole] = h[parent];
        hole = parent;
    }
    h[hole] = value;
}

/// `std::push_heap` after a `push_back`.
pub fn push_heap(h: &mut [(f32, i32)]) {
    let last = h.len() - 1;
    sift_up(h, last, 0, h[last]);
}

/// libstdc++'s `__adjust_heap` from the root over `h` (len >= 1).
fn adjust_heap(h: &mut [(f32, i32)], value: (f32, i32)) {
    let len = h.len();
    let (mut hole, mut child) = (0, 0);
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if before(&h[child], &h[child - 1]) {
            child -= 1;
        }
        h[hole] = h[child];
        hole = child;
    }
    if len.is_multiple_of(2) && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        h[hole] = h[child - 1];
        hole = child - 1;
    }
    sift_up(h, hole, 0, value);
}

/// `std::sort_heap`: best score first.
pub fn sort_heap(h: &mut [(f32, i32)]) {
    let mut last = h.len();
    while last > 1 {
        last -= 1;
        let value = h[last];
        h[last] = h[0];
        adjust_heap(&mut h[..last], value);
    }
}

#[derive(Debug, Clone, Copy)]
struct Node {
    left: i32,
    right: i32,
    count: i64,
}

#[derive(Debug)]
pub enum Output {
    Softmax,
    /// one-vs-all and negative sampling: an independent sigmoid per label
    Sigmoid(Vec<f32>),
    HierarchicalSoftmax(Vec<(i32, i32)>),
}

/// fastText's sigmoid table (`Loss::Loss`): 513 values over [-8, 8].
fn sigmoid_table() -> Vec<f32> {
    (0..=SIGMOID_TABLE_SIZE)
        .map(|i| {
            let x = (i * 2 * MAX_SIGMOID as usize) as f32 / SIGMOID_TABLE_SIZE as f32 - MAX_SIGMOID;
            (1.0 / (1.0 + f64::from((-x).exp()))) as f32
        })
        .collect()
}

/// `HierarchicalSoftmaxLoss::buildTree`: a Huffman tree over the label counts (sorted descending, as the
/// dictionary keeps them); nodes `osz..2*osz-1` are inner, their output rows `node - osz`.
fn huffman(counts: &[i64]) -> Vec<(i32, i32)> {
    let osz = counts.len();
    if osz == 0 {
        return Vec::new(); // a damaged file without labels: `Model::check_shapes` refuses it
    }
    let mut tree = vec![
        Node {
            left: -1,
            right: -1,
            count: 1_000_000_000_000_000,
        };
        2 * osz - 1
    ];
    for (node, &c) in tree.iter_mut().zip(counts) {
        node.count = c;
    }
    let (mut leaf, mut next) = (osz as i64 - 1, osz);
    for i in osz..2 * osz - 1 {
        let mut mini = [0usize; 2];
        for m in &mut mini {
            if leaf >= 0 && tree[leaf as usize].count < tree[next].count {
                *m = leaf as usize;
                leaf -= 1;
            } else {
                *m = next;
                next += 1;
            }
        }
        tree[i].left = mini[0] as i32;
        tree[i].right = mini[1] as i32;
        tree[i].count = tree[mini[0]].count.saturating_add(tree[mini[1]].count); // counts come from the file
    }
    tree.iter().map(|n| (n.left, n.right)).collect()
}

impl Output {
    pub fn softmax() -> Self {
        Self::Softmax
    }

    pub fn sigmoid() -> Self {
        Self::Sigmoid(sigmoid_table())
    }

    pub fn hierarchical(label_counts: &[i64]) -> Self {
        Self::HierarchicalSoftmax(huffman(label_counts))
    }

    /// Every label's log-probability for `hidden` into `heap` (cleared), best first.
    pub fn predict(&self, wo: &Matrix, hidden: &[f32], out: &mut Vec<f32>, heap: &mut Scored) {
        heap.clear();
        match self {
            Self::HierarchicalSoftmax(tree) => {
                let osz = tree.len().div_ceil(2);
                dfs(tree, osz, wo, hidden, tree.len() - 1, 0.0, heap);
            }
            _ => {
                out.clear();
                out.extend((0..wo.rows()).map(|i| wo.dot_row(hidden, i)));
                if let Self::Sigmoid(table) = self {
                    for v in out.iter_mut() {
                        *v = sigmoid(table, *v);
                    }
                } else {
                    softmax(out);
                }
                for (i, &p) in out.iter().enumerate() {
                    // `findKBest` with threshold 0 and k = every label: all of them, none evicted
                    heap.push((std_log(p), i as i32));
                    push_heap(heap);
                }
            }
        }
        sort_heap(heap);
    }
}

#[inline]
fn sigmoid(table: &[f32], x: f32) -> f32 {
    if x < -MAX_SIGMOID {
        0.0
    } else if x > MAX_SIGMOID {
        1.0
    } else {
        table[((x + MAX_SIGMOID) * SIGMOID_TABLE_SIZE as f32 / MAX_SIGMOID / 2.0) as usize]
    }
}

fn softmax(out: &mut [f32]) {
    let max = out.iter().fold(out[0], |m, &v| if v < m { m } else { v });
    let mut z = 0.0f32;
    for v in out.iter_mut() {
        *v = (*v - max).exp();
        z += *v;
    }
    for v in out.iter_mut() {
        *v /= z;
    }
}

/// `HierarchicalSoftmaxLoss::dfs` with threshold 0: a path whose score falls below `std_log(0)` stops.
fn dfs(
    tree: &[(i32, i32)],
    osz: usize,
    wo: &Matrix,
    hidden: &[f32],
    node: usize,
    score: f32,
    heap: &mut Scored,
) {
    if score < std_log(0.0) {
        return;
    }
    let (left, right) = tree[node];
    if left == -1 && right == -1 {
        heap.push((score, node as i32));
        push_heap(heap);
        return;
    }
    let f = wo.dot_row(hidden, node - osz);
    let f = (1.0 / f64::from(1.0 + (-f).exp())) as f32;
    let (l, r) = (std_log((1.0 - f64::from(f)) as f32), std_log(f));
    dfs(tree, osz, wo, hidden, left as usize, score + l, heap);
    dfs(tree, osz, wo, hidden, right as usize, score + r, heap);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_sorts_best_first_like_libstdcxx() {
        let mut h: Scored = Vec::new();
        for (i, s) in [-3.0f32, -1.0, -2.0, -1.0, -5.0, -1.0].iter().enumerate() {
            h.push((*s, i as i32));
            push_heap(&mut h);
        }
        sort_heap(&mut h);
        let scores: Vec<f32> = h.iter().map(|p| p.0).collect();
        assert_eq!(scores, vec![-1.0, -1.0, -1.0, -2.0, -3.0, -5.0]);
        // the order of the ties is libstdc++'s (std::push_heap x6 then std::sort_heap with comparePairs)
        let ties: Vec<i32> = h[..3].iter().map(|p| p.1).collect();
        assert_eq!(ties, vec![3, 1, 5]);
    }

    #[test]
    fn huffman_tree_of_three_labels() {
        // counts sorted descending as in the dictionary: the two rarest pair first
        let tree = huffman(&[5, 3, 2]);
        assert_eq!(tree[3], (2, 1));
        assert_eq!(tree[4], (3, 0));
    }

    #[test]
    fn sigmoid_table_ends_and_middle() {
        let t = sigmoid_table();
        assert_eq!(t.len(), 513);
        assert!(t[0] > 0.0 && t[0] < 0.001 && (t[256] - 0.5).abs() < 1e-7);
        assert_eq!(sigmoid(&t, 9.0), 1.0);
        assert_eq!(sigmoid(&t, -9.0), 0.0);
    }
}
