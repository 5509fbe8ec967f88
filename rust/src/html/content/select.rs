//! Readability's candidate scoring and the choice of the subtrees to keep: the top candidate, its moves up
//! the tree, and the siblings that join it. Two structures widen "sibling" (not under `Favor::Precision`):
//! inside an `<article>`, `<main>` or `itemprop="articleBody"`, prose at any level up to that element joins;
//! a top cell of a layout table has the table's other cells for siblings.
//!
//! Kept apart from the measuring because it only reads the sums; the thresholds (five ancestor levels,
//! 0.75 of the best for alternatives, a third of the score to climb, 0.2 and 10 for siblings) are
//! Readability's.

use super::{Pass, CHAR_THRESHOLD, MIN_BLOCK_CHARS};
use crate::html::dom::{ARTICLE_BODY, PRESENTATION};
use crate::html::tags::Tag;
use crate::html::Favor;

impl Pass<'_> {
    /// Score the ancestors of every block with text; returns the candidates (scaled by link density).
    pub(super) fn score(&mut self) -> Vec<usize> {
        let nodes = &self.doc.nodes;
        let mut cands = Vec::new();
        for b in 1..nodes.len() {
            let chars = self.own_chars[b];
            if chars < MIN_BLOCK_CHARS || self.excl[b] {
                continue;
            }
            let cs = 1.0 + self.own_commas[b] as f32 + (chars / 100).min(3) as f32;
            let mut a = if self.mixed[b] {
                b
            } else {
                nodes[b].parent as usize
            };
            // a block right under the root (a page without `<html>` and `<body>`: the body is implied) scores
            // the root, else such a page would have no candidate at all
            for level in 0..5 {
                if a == 0 && level > 0 {
                    break;
                }
                if !self.scored[a] {
                    self.scored[a] = true;
                    self.score[a] = nodes[a].tag.base_score() + self.weight(a);
                    cands.push(a);
                }
                let div = match level {
                    0 => 1.0,
                    1 => 2.0,
                    l => l as f32 * 3.0,
                };
                self.score[a] += cs / div;
                if a == 0 {
                    break;
                }
                a = nodes[a].parent as usize;
            }
        }
        for &c in &cands {
            self.score[c] *= 1.0 - self.link_density(c);
        }
        cands
    }

    fn is_descendant(&self, node: usize, of: usize) -> bool {
        of < node && node < self.doc.nodes[of].end as usize
    }

    fn is_top_level(&self, i: usize) -> bool {
        matches!(self.doc.nodes[i].tag, Tag::Root | Tag::Html | Tag::Body)
    }

    /// The top candidate after Readability's two moves up the tree.
    pub(super) fn top(&self, mut cands: Vec<usize>) -> Option<usize> {
        let nodes = &self.doc.nodes;
        if let Some(&body) = (1..nodes.len())
            .filter(|&i| nodes[i].flags & ARTICLE_BODY != 0 && !self.excl[i])
            .collect::<Vec<_>>()
            .first()
        {
            if self.sums[body].chars as usize >= CHAR_THRESHOLD {
                return Some(body);
            }
        }
        cands.sort_by(|&a, &b| self.score[b].total_cmp(&self.score[a]).then(a.cmp(&b)));
        let mut top = *cands.first()?;
        let best = self.score[top];
        let alts: Vec<usize> = cands[1..cands.len().min(5)]
            .iter()
            .copied()
            .filter(|&c| best > 0.0 && self.score[c] / best >= 0.75)
            .collect();
        if alts.len() >= 3 {
            let mut p = nodes[top].parent as usize;
            while !self.is_top_level(p) {
                if alts.iter().filter(|&&c| self.is_descendant(c, p)).count() >= 3 {
                    top = p;
                    break;
                }
                p = nodes[p].parent as usize;
            }
        }
        let mut last = self.score[top];
        let threshold = last / 3.0;
        let mut p = nodes[top].parent as usize;
        while !self.is_top_level(p) {
            if self.scored[p] {
                let ps = self.score[p];
                if ps < threshold {
                    break;
                }
                if ps > last {
                    top = p;
                    break;
                }
                last = ps;
            }
            p = nodes[p].parent as usize;
        }
        loop {
            let p = nodes[top].parent as usize;
            if self.is_top_level(p) || self.sums[p].elems != 1 {
                break;
            }
            top = p;
        }
        Some(top)
    }

    /// The top candidate and the siblings that join it, in document order.
    pub(super) fn roots(&self, top: usize) -> Vec<usize> {
        let nodes = &self.doc.nodes;
        let parent = nodes[top].parent as usize;
        if parent == 0 || nodes[top].flags & ARTICLE_BODY != 0 {
            return vec![top];
        }
        let top_score = self.score[top];
        let threshold = (top_score * 0.2).max(10.0);
        let bound = self.semantic_bound(top);
        let joins = |c: usize| {
            let node = &nodes[c];
            if node.tag == Tag::Text || self.excl[c] {
                return false;
            }
            let bonus = if node.a != 0 && node.a == nodes[top].a {
                top_score * 0.2
            } else {
                0.0
            };
            let ld = self.link_density(c);
            let chars = self.sums[c].chars;
            if (self.scored[c] && self.score[c] + bonus >= threshold)
                || (!self.scored[c] && self.is_unscored_prose(c))
                || (bound.is_some() && self.is_prose_in_bound(c))
                || self.is_data_table(c)
            {
                true
            } else if node.tag == Tag::P {
                (chars > 80 && ld < 0.25)
                    || (chars > 0 && chars <= 80 && ld == 0.0 && self.ends_sentence(c))
            } else {
                false
            }
        };
        let mut out = Vec::new();
        if let Some(table) = self.layout_table_of(top) {
            // the page's rows are layout: the article goes on in other cells of the table, not siblings
            let mut c = table + 1;
            while c < nodes[table].end as usize {
                match nodes[c].tag {
                    Tag::Table => c = nodes[c].end as usize,
                    Tag::Td => {
                        if c == top || joins(c) {
                            out.push(c);
                        }
                        c = nodes[c].end as usize;
                    }
                    _ => c += 1,
                }
            }
            return out;
        }
        // a heading right before a block that is kept is that block's title (`Technische Daten` over the
        // specification table, a section's `<h2>` over its text): it joins with the block
        let titles = self.favor != Favor::Precision;
        let mut heading = None;
        let mut c = parent + 1;
        while c < nodes[parent].end as usize {
            let node = &nodes[c];
            if c == top || joins(c) {
                out.extend(heading.take());
                out.push(c);
            } else if node.tag != Tag::Text {
                heading = (titles && is_sub_heading(node.tag) && !self.excl[c]).then_some(c);
            }
            c = node.end as usize;
        }
        if let Some(bound) = bound {
            let mut cur = parent;
            while cur != bound {
                let up = nodes[cur].parent as usize;
                let mut c = up + 1;
                while c < nodes[up].end as usize {
                    if c != cur && self.is_prose_in_bound(c) {
                        out.push(c);
                    }
                    c = nodes[c].end as usize;
                }
                cur = up;
            }
            out.sort_unstable();
        }
        out
    }

    /// The table whose cell `top` is, when it is a layout table (no header cells; `favor` not precision).
    /// Sites laid out with tables put the navigation in one column and the article in another, often over
    /// several rows (a title row, the body, a continuation after an ad row): the top cell's siblings are the
    /// navigation cells of its own row, and the article's other rows are cells of other rows, which
    /// Readability's sibling rule never sees.
    fn layout_table_of(&self, top: usize) -> Option<usize> {
        let nodes = &self.doc.nodes;
        if self.favor == Favor::Precision || nodes[top].tag != Tag::Td {
            return None;
        }
        let tr = nodes[top].parent as usize;
        let mut t = nodes[tr].parent as usize;
        if matches!(nodes[t].tag, Tag::Tbody | Tag::Thead | Tag::Tfoot) {
            t = nodes[t].parent as usize;
        }
        (nodes[tr].tag == Tag::Tr && nodes[t].tag == Tag::Table && self.sums[t].th == 0)
            .then_some(t)
    }

    /// The element that says where the article ends: the nearest `<article>`, `<main>` or
    /// `itemprop="articleBody"` above the top candidate (`None` under `Favor::Precision`, and in the attempts
    /// that ignore class words, which are what tells a comment thread inside the bound from prose). HTML
    /// authors put the whole article there (the standard's "self-contained composition" and "dominant
    /// content"), but split it into parts at different depths -- a lede paragraph beside the body wrapper,
    /// sections, a part continued after a figure inside more wrappers -- that Readability's sibling rule,
    /// which looks one level around the top candidate only, cannot reach.
    fn semantic_bound(&self, top: usize) -> Option<usize> {
        if self.favor == Favor::Precision || !self.rules.weight_classes {
            return None;
        }
        let nodes = &self.doc.nodes;
        let mut p = nodes[top].parent as usize;
        while p != 0 {
            let n = &nodes[p];
            if matches!(n.tag, Tag::Article | Tag::Main) || n.flags & ARTICLE_BODY != 0 {
                return (!self.excl[p]).then_some(p);
            }
            p = n.parent as usize;
        }
        None
    }

    /// A block inside the semantic bound that reads as the article's prose: paragraphs (or a paragraph),
    /// 80 characters, few links, no furniture class, and not what conditional cleaning would drop. The
    /// bound vouches for it, so it needs neither a score nor the 500 characters an unbounded block needs.
    fn is_prose_in_bound(&self, c: usize) -> bool {
        let node = &self.doc.nodes[c];
        if node.tag == Tag::Text || self.excl[c] {
            return false;
        }
        let max_ld = if self.favor == Favor::Recall {
            0.3
        } else {
            0.2
        };
        let s = &self.sums[c];
        (s.p > 0 || node.tag == Tag::P)
            && s.chars >= 80
            && self.link_density(c) < max_ld
            && self.weight(c) >= 0.0
            && !(self.rules.clean_conditionally && self.looks_like_furniture(c))
    }

    /// A sibling block of prose that scoring never reached: its paragraphs sit more than five levels down
    /// (wrappers of wrappers), so Readability's sibling rule cannot see it, yet it is the rest of an article
    /// that a figure, an ad or a "read also" box split off. It joins when it has paragraphs, enough text
    /// (`CHAR_THRESHOLD`, 200 characters under `Favor::Recall`), few links and no furniture class;
    /// `Favor::Precision` keeps Readability's rule alone.
    fn is_unscored_prose(&self, c: usize) -> bool {
        let (min_chars, max_ld) = match self.favor {
            Favor::Precision => return false,
            Favor::Balanced => (CHAR_THRESHOLD as u32, 0.2),
            Favor::Recall => (200, 0.3),
        };
        let s = &self.sums[c];
        s.p > 0 && s.chars >= min_chars && self.link_density(c) < max_ld && self.weight(c) >= 0.0
    }

    /// A data table beside the top candidate: a product's specifications under its description, the
    /// figures under a report. Readability's sibling rule never keeps one (its cells are too short to score),
    /// yet shops and reports put their main facts there. It joins when it has the signs of a data table
    /// ([`Pass::has_data_table_signs`]), no other table inside, no form field, few links and no furniture
    /// class; not under `Favor::Precision`.
    fn is_data_table(&self, c: usize) -> bool {
        let nodes = &self.doc.nodes;
        let s = &self.sums[c];
        if self.favor == Favor::Precision
            || nodes[c].tag != Tag::Table
            || nodes[c].flags & PRESENTATION != 0
            || self.excl[c]
            || s.tables != 1
            || s.input > 0
            || s.chars == 0
            || self.weight(c) < 0.0
            || self.link_density(c) >= 0.2
        {
            return false;
        }
        self.has_data_table_signs(c)
    }

    fn ends_sentence(&self, i: usize) -> bool {
        let text = self.subtree_text(i);
        let t = text.trim_ascii_end();
        t.ends_with(b".") || t.windows(2).any(|w| w == b". ")
    }

    pub(super) fn subtree_text(&self, i: usize) -> Vec<u8> {
        let nodes = &self.doc.nodes;
        let mut out = Vec::new();
        for n in &nodes[i..nodes[i].end as usize] {
            if n.tag == Tag::Text {
                out.extend_from_slice(self.doc.text_of(n));
            }
        }
        out
    }
}

/// `<h2>`..`<h6>`: section titles (an `<h1>` beside the article is the page's headline, not a section's).
fn is_sub_heading(tag: Tag) -> bool {
    matches!(tag, Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6)
}
