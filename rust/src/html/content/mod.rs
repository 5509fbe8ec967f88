//! Main-content choice on a [`Doc`]: Readability's scoring, on flat arrays.
//!
//! Every block with at least 25 characters of its own text scores `1 + commas + min(chars / 100, 3)` and
//! hands it to five ancestors (full, half, then a third per level), which start from a tag score and the
//! class weight. A candidate's final score is scaled by `1 - link density`. The best candidate may move to an
//! ancestor that holds several near-best ones, or up while scores rise; then its siblings join when they
//! score well or read like prose. Inside the chosen subtrees, lists, tables and divs that look like furniture
//! (link-dense, image- or form-heavy, negative class) are dropped and what remains is written out as
//! paragraphs. Four attempts loosen the rules in Readability's order until one yields 500 characters.

use super::dom::{Doc, ARTICLE_BODY, HARD_JUNK, PRESENTATION, SOFT_JUNK};
use super::tags::Tag;

mod write;

/// Characters an attempt must reach before the looser ones are skipped (Readability's `charThreshold`).
pub const CHAR_THRESHOLD: usize = 500;
/// A block shorter than this scores nothing (Readability's 25).
const MIN_BLOCK_CHARS: u32 = 25;

#[derive(Debug, Clone, Copy)]
struct Rules {
    strip_unlikely: bool,
    weight_classes: bool,
    clean_conditionally: bool,
}

const ATTEMPTS: [Rules; 4] = [
    Rules {
        strip_unlikely: true,
        weight_classes: true,
        clean_conditionally: true,
    },
    Rules {
        strip_unlikely: false,
        weight_classes: true,
        clean_conditionally: true,
    },
    Rules {
        strip_unlikely: false,
        weight_classes: false,
        clean_conditionally: true,
    },
    Rules {
        strip_unlikely: false,
        weight_classes: false,
        clean_conditionally: false,
    },
];

/// Per-subtree sums over the nodes an attempt keeps.
#[derive(Default, Clone, Copy)]
struct Sums {
    chars: u32,
    link: u32,
    commas: u32,
    p: u32,
    img: u32,
    li: u32,
    input: u32,
    embed: u32,
    th: u32,
    tables: u32,
    elems: u32,
}

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

struct Pass<'d> {
    doc: &'d Doc,
    rules: Rules,
    excl: Vec<bool>,
    sums: Vec<Sums>,
    own_chars: Vec<u32>,
    own_commas: Vec<u32>,
    /// A div with block children and text of its own: Readability wraps that text in a new `<p>` child,
    /// so the div itself is the first ancestor to score.
    mixed: Vec<bool>,
    score: Vec<f32>,
    scored: Vec<bool>,
}

impl<'d> Pass<'d> {
    fn new(doc: &'d Doc, rules: Rules) -> Self {
        let n = doc.nodes.len();
        let mut p = Pass {
            doc,
            rules,
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

    fn link_density(&self, i: usize) -> f32 {
        let s = &self.sums[i];
        if s.chars == 0 {
            0.0
        } else {
            s.link as f32 / s.chars as f32
        }
    }

    fn weight(&self, i: usize) -> f32 {
        if self.rules.weight_classes {
            f32::from(self.doc.nodes[i].weight)
        } else {
            0.0
        }
    }

    /// Score the ancestors of every block with text; returns the candidates (scaled by link density).
    fn score(&mut self) -> Vec<usize> {
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
            for level in 0..5 {
                if a == 0 {
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
    fn top(&self, mut cands: Vec<usize>) -> Option<usize> {
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
    fn roots(&self, top: usize) -> Vec<usize> {
        let nodes = &self.doc.nodes;
        let parent = nodes[top].parent as usize;
        if parent == 0 || nodes[top].flags & ARTICLE_BODY != 0 {
            return vec![top];
        }
        let top_score = self.score[top];
        let threshold = (top_score * 0.2).max(10.0);
        let mut out = Vec::new();
        let mut c = parent + 1;
        while c < nodes[parent].end as usize {
            let next = nodes[c].end as usize;
            let node = &nodes[c];
            if c == top {
                out.push(c);
            } else if node.tag != Tag::Text && !self.excl[c] {
                let bonus = if node.a != 0 && node.a == nodes[top].a {
                    top_score * 0.2
                } else {
                    0.0
                };
                let ld = self.link_density(c);
                let chars = self.sums[c].chars;
                let joins = if self.scored[c] && self.score[c] + bonus >= threshold {
                    true
                } else if node.tag == Tag::P {
                    (chars > 80 && ld < 0.25)
                        || (chars > 0 && chars <= 80 && ld == 0.0 && self.ends_sentence(c))
                } else {
                    false
                };
                if joins {
                    out.push(c);
                }
            }
            c = next;
        }
        out
    }

    fn ends_sentence(&self, i: usize) -> bool {
        let text = self.subtree_text(i);
        let t = text.trim_ascii_end();
        t.ends_with(b".") || t.windows(2).any(|w| w == b". ")
    }

    fn subtree_text(&self, i: usize) -> Vec<u8> {
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

/// The main text of `doc` (empty when no block of the page has text enough to score).
///
/// Readability keeps the longest attempt when none reaches [`CHAR_THRESHOLD`]; that lets a short article
/// pick up its byline and share bar, or the comment thread next to it, from a looser attempt. Here a looser
/// attempt replaces a stricter one only when it at least doubles the text, and, when the stricter attempt
/// found a real piece of prose (half the threshold), only when it contains that prose: the sign that strict
/// rules cut the article itself rather than that loose rules found something else.
pub fn main_text(doc: &Doc) -> String {
    let mut best = String::new();
    let mut best_chars = 0;
    let mut best_top = None;
    for rules in ATTEMPTS {
        let mut pass = Pass::new(doc, rules);
        let cands = pass.score();
        let Some(top) = pass.top(cands) else { continue };
        let roots = pass.roots(top);
        let mut text = String::new();
        pass.write(&roots, &mut text);
        let chars = text.chars().count();
        if chars >= CHAR_THRESHOLD && best_chars == 0 {
            return text;
        }
        let extends = |t: usize| {
            roots
                .iter()
                .any(|&r| r <= t && t < doc.nodes[r].end as usize)
        };
        let replaces = chars > 2 * best_chars
            && (best_chars < CHAR_THRESHOLD / 2 || best_top.is_some_and(extends));
        if replaces {
            best = text;
            best_chars = chars;
            best_top = Some(top);
        }
        if best_chars >= CHAR_THRESHOLD {
            break;
        }
    }
    best
}

/// Each attempt's top candidate, roots and text length (debugging aid for tests).
#[cfg(test)]
pub fn explain(doc: &Doc) -> Vec<String> {
    ATTEMPTS
        .iter()
        .map(|&rules| {
            let mut pass = Pass::new(doc, rules);
            let cands = pass.score();
            let mut best = cands.clone();
            best.sort_by(|&a, &b| pass.score[b].total_cmp(&pass.score[a]));
            let best: Vec<String> = best
                .iter()
                .take(6)
                .map(|&c| {
                    format!(
                        "{c}:{:?}={:.1}/ld{:.2}",
                        doc.nodes[c].tag,
                        pass.score[c],
                        pass.link_density(c)
                    )
                })
                .collect();
            println!("cands {best:?}");
            let Some(top) = pass.top(cands) else {
                return format!("{rules:?}: none");
            };
            let roots = pass.roots(top);
            let mut text = String::new();
            pass.write(&roots, &mut text);
            format!(
                "{rules:?}: top {top} ({:?}, score {:.1}) roots {roots:?} -> {} chars",
                doc.nodes[top].tag,
                pass.score[top],
                text.len()
            )
        })
        .collect()
}
