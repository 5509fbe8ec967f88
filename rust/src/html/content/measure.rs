//! What each subtree holds under one attempt's rules: which nodes are excluded, and the text, link, comma
//! and element counts that scoring, selection and cleaning all read.
//!
//! Two flat passes over the pre-order arena (down for exclusion and the enclosing block, up for the sums)
//! replace Readability's repeated subtree walks, so every later question about a subtree is one array read.

use super::{Pass, Rules, Sums, MIN_BLOCK_CHARS};
use crate::html::dom::{Doc, HARD_JUNK, SOFT_JUNK};
use crate::html::tags::Tag;
use crate::html::Favor;

fn char_count(s: &[u8]) -> u32 {
    s.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u32
}

/// `,` plus the CJK commas `，` and `、`, so prose in any script counts.
fn comma_count(s: &[u8]) -> u32 {
    let mut n = 0;
    for (i, &b) in s.iter().enumerate() {
        n += match b {
            b',' => 1,
            0x8C if i >= 2 && s[i - 2] == 0xEF && s[i - 1] == 0xBC => 1,
            0x81 if i >= 2 && s[i - 2] == 0xE3 && s[i - 1] == 0x80 => 1,
            _ => 0,
        };
    }
    n
}
impl<'d> Pass<'d> {
    pub(super) fn new(doc: &'d Doc, rules: Rules, favor: Favor) -> Self {
        let n = doc.nodes.len();
        let mut p = Pass {
            doc,
            rules,
            favor,
            excl: vec![false; n],
            sums: vec![Sums::default(); n],
            own_chars: vec![0; n],
            own_commas: vec![0; n],
            mixed: vec![false; n],
            score: vec![0.0; n],
            scored: vec![false; n],
        };
        p.measure();
        p
    }

    /// Exclusion and text sums: one pass down (exclusion, blocks, links), one pass up (sums).
    fn measure(&mut self) {
        let nodes = &self.doc.nodes;
        let n = nodes.len();
        let mut in_link = vec![false; n];
        let mut block = vec![0u32; n];
        for i in 1..n {
            let node = &nodes[i];
            let p = node.parent as usize;
            let soft = self.rules.strip_unlikely && node.flags & SOFT_JUNK != 0;
            self.excl[i] = self.excl[p] || node.flags & HARD_JUNK != 0 || soft;
            in_link[i] = in_link[p] || node.tag == Tag::A;
            block[i] = if node.tag.is_block() {
                i as u32
            } else {
                block[p]
            };
            if (node.tag.is_block() || node.tag == Tag::Img) && nodes[p].tag == Tag::Div {
                self.mixed[p] = true;
            }
            if node.tag == Tag::Text && !self.excl[i] {
                let t = self.doc.text_of(node);
                let (c, k) = (char_count(t), comma_count(t));
                let s = &mut self.sums[i];
                s.chars = c;
                s.commas = k;
                if in_link[p] {
                    s.link = c;
                }
                let b = block[p] as usize;
                self.own_chars[b] += c;
                self.own_commas[b] += k;
            }
        }
        for i in (1..n).rev() {
            if self.excl[i] {
                continue;
            }
            let node = &nodes[i];
            let mut s = self.sums[i];
            match node.tag {
                Tag::P => s.p += 1,
                Tag::Img => s.img += 1,
                Tag::Li => s.li += 1,
                Tag::Input => s.input += 1,
                Tag::Embed | Tag::Iframe | Tag::Object => s.embed += 1,
                Tag::Th | Tag::Caption | Tag::Thead => s.th += 1,
                Tag::Table => s.tables += 1,
                // a div of inline content is a paragraph to Readability (it retags it `p`)
                Tag::Div | Tag::Section if self.own_chars[i] >= MIN_BLOCK_CHARS => s.p += 1,
                _ => {}
            }
            self.sums[i] = s;
            let p = node.parent as usize;
            let ps = &mut self.sums[p];
            ps.chars += s.chars;
            ps.link += s.link;
            ps.commas += s.commas;
            ps.p += s.p;
            ps.img += s.img;
            ps.li += s.li;
            ps.input += s.input;
            ps.embed += s.embed;
            ps.th += s.th;
            ps.tables += s.tables;
            if node.tag != Tag::Text {
                ps.elems += 1;
            }
        }
    }

    pub(super) fn link_density(&self, i: usize) -> f32 {
        let s = &self.sums[i];
        if s.chars == 0 {
            0.0
        } else {
            s.link as f32 / s.chars as f32
        }
    }

    pub(super) fn weight(&self, i: usize) -> f32 {
        if self.rules.weight_classes {
            f32::from(self.doc.nodes[i].weight)
        } else {
            0.0
        }
    }
}
