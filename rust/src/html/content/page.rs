//! One page ready for the block model: its units and everything their features are computed from -- the
//! ancestors' context, subtree counts, what the rules wrote, repeated classes and texts, the headline.

use std::collections::HashMap;

use super::units::{self, Ctx, Unit, FAR};
use super::{Pass, Pick};
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
    pick: Option<Pick<'d>>,
    pub(super) attempt: f32,
    /// Nearest written unit at or before / at or after each unit.
    prev_w: Vec<Option<usize>>,
    next_w: Vec<Option<usize>>,
    /// Units since the last `<h1>` unit (at most 60; 60 when none came before).
    pub(super) since_h1: Vec<u8>,
    /// Characters of the units before each unit (and after the last), for the characters between two units.
    before: Vec<u32>,
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
    headline: Option<usize>,
    pub(super) total_chars: u32,
    pub(super) written_chars: u32,
    title: Vec<u8>,
    description: Vec<u8>,
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

    /// Whether the unit's text and the page's `<title>` (`description`: meta description) contain each
    /// other, case-blind (ASCII), for units of at least 10 characters.
    pub(super) fn head_match(&self, u: usize, description: bool) -> f32 {
        let unit = &self.units[u];
        let head = if description {
            &self.description
        } else {
            &self.title
        };
        if head.len() < 10 || unit.chars < 10 || (unit.chars as usize) > 4 * head.len() + 40 {
            return 0.0;
        }
        let mut text = Vec::new();
        self.unit_text(u, &mut text);
        text.make_ascii_lowercase();
        let t = text.trim_ascii();
        let probe = &head[..head.len().min(60)];
        let hit =
            head.windows(t.len()).any(|w| w == t) || t.windows(probe.len()).any(|w| w == probe);
        f32::from(u8::from(hit))
    }

    /// In the rules' subtrees, excluded by its rules, the nearest scored ancestor's score over the top's,
    /// levels up to it, levels up to the top candidate, the top's link density, levels up to the nearest
    /// ancestor that holds the top candidate and levels from there down to the top.
    pub(super) fn rules_view(&self, u: usize) -> [f32; 8] {
        let Some(pick) = &self.pick else {
            return [
                0.0, 0.0, 0.0, FAR as f32, FAR as f32, 0.0, FAR as f32, FAR as f32,
            ];
        };
        let p: &Pass<'_> = &pick.pass;
        let unit = &self.units[u];
        let first = unit.first as usize;
        let nodes = &self.doc.nodes;
        let in_roots = pick
            .roots
            .iter()
            .any(|&r| r <= first && first < nodes[r].end as usize);
        let top_score = p.score[pick.top].max(1e-3);
        let (mut cand, mut cand_levels, mut top_levels) = (0.0, FAR as f32, FAR as f32);
        let mut a = unit.block as usize;
        for level in 0..12u8 {
            if cand_levels == FAR as f32 && p.scored[a] {
                cand = (p.score[a] / top_score).clamp(-2.0, 2.0);
                cand_levels = f32::from(level);
            }
            if a == pick.top {
                top_levels = f32::from(level);
            }
            if a == 0 {
                break;
            }
            a = nodes[a].parent as usize;
        }
        let top = pick.top;
        let (mut lca, mut up) = (unit.block as usize, 0u16);
        while !(lca <= top && top < nodes[lca].end as usize) && lca != 0 {
            lca = nodes[lca].parent as usize;
            up += 1;
        }
        let down = self.ctx[top].depth.saturating_sub(self.ctx[lca].depth);
        [
            f32::from(u8::from(in_roots)),
            f32::from(u8::from(p.excl[first])),
            cand,
            cand_levels,
            top_levels,
            p.link_density(pick.top),
            f32::from(up.min(FAR as u16)),
            f32::from(down.min(FAR as u16)),
        ]
    }

    /// Levels from unit `u`'s block up to the nearest ancestor that also holds the headline, and that
    /// ancestor's depth ([`FAR`] twice when the page has no headline): the article shares a close container
    /// with its headline, a sidebar or a list of other stories meets it only near the root.
    pub(super) fn headline_lca(&self, u: usize) -> [f32; 2] {
        let Some(h) = self.headline else {
            return [FAR as f32, FAR as f32];
        };
        let nodes = &self.doc.nodes;
        let (mut a, mut up) = (self.units[u].block as usize, 0u16);
        while a != 0 && !(a <= h && h < nodes[a].end as usize) {
            a = nodes[a].parent as usize;
            up += 1;
        }
        [
            f32::from(up.min(FAR as u16)),
            f32::from(self.ctx[a].depth.min(FAR as u16)),
        ]
    }

    /// Written units after unit `u` (at most 20).
    pub(super) fn written_after(&self, u: usize) -> f32 {
        let mut n = 0u32;
        let mut v = self.next_w[u];
        while let Some(w) = v {
            if w > u {
                n += 1;
                if n == 20 {
                    break;
                }
            }
            v = self.next_w.get(w + 1).copied().flatten();
        }
        n as f32
    }

    /// Units to the nearest written unit, no written unit before / after, log characters in between.
    pub(super) fn region(&self, u: usize) -> [f32; 4] {
        if self.written[u] > 0 {
            return [0.0, 0.0, 0.0, 0.0];
        }
        let (before, after) = (self.prev_w[u], self.next_w[u]);
        let dist = |w: Option<usize>| w.map_or(usize::MAX, |w| w.abs_diff(u));
        let d = dist(before).min(dist(after)).min(30) as f32;
        let near = if dist(before) <= dist(after) {
            before
        } else {
            after
        };
        let chars = near.map_or(self.total_chars, |w| {
            let (a, b) = (w.min(u), w.max(u));
            self.before[b] - self.before[a + 1]
        });
        [
            d,
            f32::from(u8::from(before.is_none() && after.is_some())),
            f32::from(u8::from(after.is_none() && before.is_some())),
            ln1p(chars),
        ]
    }
}
