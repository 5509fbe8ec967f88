//! One page ready for the block model: its units and everything their features are computed from -- the
//! ancestors' context, subtree counts, what the rules wrote, repeated classes and texts, the headline.

use std::collections::HashMap;

use super::units::{self, Ctx, Unit};
use super::Pick;
use crate::html::dom::Doc;
use crate::html::tags::Tag;

/// Per-subtree counts.
#[derive(Clone, Copy, Default)]
pub(super) struct Sub {
    pub chars: u32,
    pub link: u32,
    pub links: u32,
    pub items: u32,
}

/// A page's units and what their features read.
pub struct Page<'d> {
    pub doc: &'d Doc,
    pub units: Vec<Unit>,
    pub(super) ctx: Vec<Ctx>,
    pub(super) sub: Vec<Sub>,
    /// Characters of each unit the rules write.
    pub(super) written: Vec<u32>,
    pub(super) pick: Option<Pick<'d>>,
    pub(super) attempt: f32,
    /// Nearest written unit at or before / at or after each unit.
    pub(super) prev_w: Vec<Option<usize>>,
    pub(super) next_w: Vec<Option<usize>>,
    /// Units since the last `<h1>` unit (at most 60; 60 when none came before).
    pub(super) since_h1: Vec<u8>,
    /// Characters of the units before each unit (and after the last), for the characters between two units.
    pub(super) before: Vec<u32>,
    /// Units of the page whose block has the same class / text hash as this one's.
    pub(super) same_class: Vec<u32>,
    pub(super) same_text: Vec<u32>,
    /// Of the units whose block has this unit's class (0: no class), the share of characters written.
    pub(super) class_written: Vec<f32>,
    /// Share of the characters under the block's parent / grandparent that the rules write.
    pub(super) parent_written: Vec<[f32; 2]>,
    /// Written units before this one (at most 20).
    pub(super) written_before: Vec<u8>,
    /// Characters of the longest unit of prose (under 30 % links) on the page, and of the longest such unit
    /// the rules do not write: a long block of prose left out says the rules may have picked the wrong block.
    pub(super) longest: [u32; 2],
    /// The headline: the block of the first `<h1>` of 8 characters or more that is not a link.
    pub(super) headline: Option<usize>,
    pub(super) total_chars: u32,
    pub(super) written_chars: u32,
    pub(super) title: Vec<u8>,
    pub(super) description: Vec<u8>,
}

pub(super) fn ln1p(x: u32) -> f32 {
    (x as f32).ln_1p()
}

pub(super) fn ratio(a: u32, b: u32) -> f32 {
    if b == 0 {
        0.0
    } else {
        a as f32 / b as f32
    }
}

fn counts<K: std::hash::Hash + Eq + Copy>(
    keys: impl Iterator<Item = K> + Clone,
    skip: K,
) -> Vec<u32> {
    let mut m: HashMap<K, u32> = HashMap::new();
    for k in keys.clone() {
        *m.entry(k).or_default() += 1;
    }
    keys.map(|k| if k == skip { 1 } else { m[&k] }).collect()
}

impl<'d> Page<'d> {
    /// Units and features of `doc`, given what the rules picked (`attempt`: its index, 4 when none).
    pub(crate) fn new(doc: &'d Doc, pick: Option<Pick<'d>>, attempt: usize) -> Self {
        let ctx = units::contexts(doc);
        let units = units::units(doc, &ctx);
        let nodes = &doc.nodes;
        let mut sub = vec![Sub::default(); nodes.len()];
        for i in (1..nodes.len()).rev() {
            let n = &nodes[i];
            let mut s = sub[i];
            match n.tag {
                Tag::Text => {
                    s.chars = doc.text_of(n).iter().filter(|&&b| b & 0xC0 != 0x80).count() as u32;
                    if ctx[i].flags & units::IN_LINK != 0 {
                        s.link = s.chars;
                    }
                }
                Tag::A => s.links += 1,
                Tag::Li | Tag::Tr | Tag::Dt => s.items += 1,
                _ => {}
            }
            sub[i] = s;
            if units::skipped_inline(doc, i) {
                continue;
            }
            let p = &mut sub[n.parent as usize];
            p.chars += s.chars;
            p.link += s.link;
            p.links += s.links;
            p.items += s.items;
        }
        let mut kept = vec![false; nodes.len()];
        if let Some(p) = &pick {
            p.pass.mark(&p.roots, &mut kept);
        }
        let written: Vec<u32> = units
            .iter()
            .map(|u| {
                let w: u32 = (u.first..u.end)
                    .filter(|&i| kept[i as usize])
                    .map(|i| sub[i as usize].chars)
                    .sum();
                w.min(u.chars)
            })
            .collect();
        let n = units.len();
        let (mut prev_w, mut next_w) = (vec![None; n], vec![None; n]);
        let mut last = None;
        for u in 0..n {
            last = if written[u] > 0 { Some(u) } else { last };
            prev_w[u] = last;
        }
        last = None;
        for u in (0..n).rev() {
            last = if written[u] > 0 { Some(u) } else { last };
            next_w[u] = last;
        }
        let mut since_h1 = vec![60u8; n];
        let mut h1: Option<usize> = None;
        for (u, unit) in units.iter().enumerate() {
            if ctx[unit.block as usize].flags & units::IN_HEADING != 0
                && nodes[unit.block as usize].tag == Tag::H1
            {
                h1 = Some(u);
            }
            since_h1[u] = h1.map_or(60, |h| (u - h).min(60) as u8);
        }
        let mut before = Vec::with_capacity(n + 1);
        let mut sum = 0u32;
        for unit in &units {
            before.push(sum);
            sum = sum.saturating_add(unit.chars);
        }
        before.push(sum);
        let mut longest = [0u32; 2];
        for (unit, w) in units.iter().zip(&written) {
            if unit.link * 10 < unit.chars * 3 {
                longest[0] = longest[0].max(unit.chars);
                if *w == 0 {
                    longest[1] = longest[1].max(unit.chars);
                }
            }
        }
        let headline = units
            .iter()
            .find(|u| {
                nodes[u.block as usize].tag == Tag::H1 && u.chars >= 8 && u.link * 2 < u.chars
            })
            .map(|u| u.block as usize);
        let same_class = counts(units.iter().map(|u| nodes[u.block as usize].a), 0);
        let mut by_class: HashMap<u32, (u32, u32)> = HashMap::new();
        for (u, unit) in units.iter().enumerate() {
            let e = by_class.entry(nodes[unit.block as usize].a).or_default();
            e.0 += unit.chars;
            e.1 += written[u];
        }
        let mut by_node: HashMap<u32, (u32, u32)> = HashMap::new();
        for (u, unit) in units.iter().enumerate() {
            let p = nodes[unit.block as usize].parent;
            for a in [p, nodes[p as usize].parent] {
                let e = by_node.entry(a).or_default();
                e.0 += unit.chars;
                e.1 += written[u];
            }
        }
        let parent_written = units
            .iter()
            .map(|unit| {
                let p = nodes[unit.block as usize].parent;
                let share = |a: u32| ratio(by_node[&a].1, by_node[&a].0);
                [share(p), share(nodes[p as usize].parent)]
            })
            .collect();
        let mut written_before = Vec::with_capacity(n);
        let mut seen = 0u8;
        for w in &written {
            written_before.push(seen);
            seen = seen.saturating_add(u8::from(*w > 0)).min(20);
        }
        let class_written = units
            .iter()
            .map(|unit| match nodes[unit.block as usize].a {
                0 => 0.0,
                c => ratio(by_class[&c].1, by_class[&c].0),
            })
            .collect();
        let same_text = counts(units.iter().map(|u| u.hash), 0);
        Page {
            doc,
            total_chars: units.iter().map(|u| u.chars).sum(),
            written_chars: written.iter().sum(),
            units,
            ctx,
            sub,
            written,
            pick,
            attempt: attempt as f32,
            prev_w,
            next_w,
            since_h1,
            before,
            same_class,
            same_text,
            class_written,
            parent_written,
            written_before,
            headline,
            longest,
            title: doc.title.trim_ascii().to_ascii_lowercase(),
            description: doc.description.trim_ascii().to_ascii_lowercase(),
        }
    }

    /// The text of unit `u`: its text nodes (hidden inline ones left out), `<br>` as a line break.
    pub fn unit_text(&self, u: usize, out: &mut Vec<u8>) {
        let nodes = &self.doc.nodes;
        let unit = &self.units[u];
        let mut i = unit.first as usize;
        while i < unit.end as usize {
            let n = &nodes[i];
            if units::skipped_inline(self.doc, i) {
                i = n.end as usize;
                continue;
            }
            match n.tag {
                Tag::Text => {
                    let t = self.doc.text_of(n);
                    let t = if out.last().is_none_or(|&b| b == b' ' || b == b'\n') {
                        t.trim_ascii_start()
                    } else {
                        t
                    };
                    out.extend_from_slice(t);
                }
                Tag::Br => {
                    while out.last() == Some(&b' ') {
                        out.pop();
                    }
                    if !out.is_empty() && out.last() != Some(&b'\n') {
                        out.push(b'\n');
                    }
                }
                _ => {}
            }
            i += 1;
        }
        while out.last().is_some_and(|b| b.is_ascii_whitespace()) {
            out.pop();
        }
    }
}
