//! Connected components of an edge list (`union_find`): union by rank with full path
//! compression; each node's component id is the smallest node index in its component, so the
//! result does not depend on edge order. Parents are `u32` when the node count allows it,
//! halving memory for the common case.

use crate::error::{KResult, KernelError};

trait Idx: Copy + Eq {
    fn from_usize(i: usize) -> Self;
    fn to_usize(self) -> usize;
}

impl Idx for u32 {
    #[inline]
    fn from_usize(i: usize) -> Self {
        i as u32
    }
    #[inline]
    fn to_usize(self) -> usize {
        self as usize
    }
}

impl Idx for u64 {
    #[inline]
    fn from_usize(i: usize) -> Self {
        i as u64
    }
    #[inline]
    fn to_usize(self) -> usize {
        self as usize
    }
}

struct Forest<I: Idx> {
    parent: Vec<I>,
    rank: Vec<u8>,
}

impl<I: Idx> Forest<I> {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n).map(I::from_usize).collect(),
            rank: vec![0; n],
        }
    }

    fn find(&mut self, x: usize) -> usize {
        let mut root = x;
        while self.parent[root].to_usize() != root {
            root = self.parent[root].to_usize();
        }
        let mut cur = x;
        while cur != root {
            let next = self.parent[cur].to_usize();
            self.parent[cur] = I::from_usize(root);
            cur = next;
        }
        root
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return;
        }
        let (hi, lo) = if self.rank[ra] >= self.rank[rb] {
            (ra, rb)
        } else {
            (rb, ra)
        };
        self.parent[lo] = I::from_usize(hi);
        if self.rank[hi] == self.rank[lo] {
            self.rank[hi] += 1;
        }
    }

    fn labels(mut self) -> Vec<u64> {
        let n = self.parent.len();
        let mut label = vec![u64::MAX; n];
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let r = self.find(i);
            if label[r] == u64::MAX {
                label[r] = i as u64;
            }
            out.push(label[r]);
        }
        out
    }
}

/// Node count implied by the edges when `num_nodes` is not given: `max(left, right) + 1`.
pub fn implied_nodes(left: &[u64], right: &[u64]) -> u64 {
    left.iter().chain(right).max().map_or(0, |&m| m + 1)
}

/// Component id (smallest member index) for nodes `0..num_nodes`.
pub fn components(num_nodes: u64, left: &[u64], right: &[u64]) -> KResult<Vec<u64>> {
    if left.len() != right.len() {
        return Err(KernelError::value(format!(
            "left and right must have the same length, got {} and {}",
            left.len(),
            right.len()
        )));
    }
    for (name, side) in [("left", left), ("right", right)] {
        if let Some((i, v)) = side.iter().enumerate().find(|(_, &v)| v >= num_nodes) {
            return Err(KernelError::value(format!(
                "{name}[{i}] = {v} is not a node index below num_nodes={num_nodes}"
            )));
        }
    }
    let n = usize::try_from(num_nodes)
        .map_err(|_| KernelError::value(format!("num_nodes={num_nodes} does not fit in memory")))?;
    Ok(if num_nodes <= u64::from(u32::MAX) {
        run::<u32>(n, left, right)
    } else {
        run::<u64>(n, left, right)
    })
}

fn run<I: Idx>(n: usize, left: &[u64], right: &[u64]) -> Vec<u64> {
    let mut f = Forest::<I>::new(n);
    for (&a, &b) in left.iter().zip(right) {
        f.union(a as usize, b as usize);
    }
    f.labels()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference: label propagation to a fixed point.
    fn naive(n: usize, edges: &[(u64, u64)]) -> Vec<u64> {
        let mut l: Vec<u64> = (0..n as u64).collect();
        loop {
            let mut changed = false;
            for &(a, b) in edges {
                let m = l[a as usize].min(l[b as usize]);
                for x in [a, b] {
                    if l[x as usize] != m {
                        l[x as usize] = m;
                        changed = true;
                    }
                }
            }
            if !changed {
                return l;
            }
        }
    }

    #[test]
    fn small_graph() {
        let got = components(7, &[5, 1, 3, 6], &[1, 2, 4, 6]).unwrap();
        assert_eq!(got, vec![0, 1, 1, 3, 3, 1, 6]);
        assert_eq!(components(0, &[], &[]).unwrap(), Vec::<u64>::new());
        assert_eq!(implied_nodes(&[3], &[9]), 10);
    }

    #[test]
    fn bad_input() {
        assert!(components(3, &[0], &[]).is_err());
        assert!(components(3, &[0], &[3]).is_err());
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(200))]
        #[test]
        fn matches_naive(n in 1usize..40, raw in proptest::collection::vec((0u64..40, 0u64..40), 0..60)) {
            let edges: Vec<_> = raw.into_iter().map(|(a, b)| (a % n as u64, b % n as u64)).collect();
            let (l, r): (Vec<u64>, Vec<u64>) = edges.iter().copied().unzip();
            prop_assert_eq!(components(n as u64, &l, &r).unwrap(), naive(n, &edges));
        }
    }
}
