//! The features of each unit that the block model reads: its text, its tag and ancestors, what class and
//! id words above it say, its containers, what Readability's rules chose, its neighbours and its place on
//! the page. All are general signals of "main text or not", none keyed to a site.
//!
//! The order of [`FEATURES`] is the model file's: the training script (`benchmarks/train_html_blocks.py`)
//! reads them through `mdf_kernels.html_blocks` and writes a model whose header names them, and the kernel
//! refuses a model whose names differ.

use super::page::{ln1p, ratio, Page};
use super::units::{self, FAR};
use super::Pass;
use crate::html::tags::Tag;
use crate::html::vocab::KINDS;

/// Feature names, in the order of a unit's feature vector.
#[rustfmt::skip]
pub const FEATURES: [&str; N] = [
    // the unit's text
    "chars_log", "words_log", "link_density", "short_word_frac", "capitalized_frac", "digit_frac",
    "stops_per_word", "commas_per_word", "ends_sentence", "copyright", "at_sign", "controls",
    "mean_word_len", "title_match", "desc_match", "same_text_log", "prompts", "services", "prompt_first", "bio_phrases",
    // its block element
    "tag_p", "tag_li", "tag_cell", "tag_heading", "tag_dd", "tag_div", "tag_quote_pre", "tag_caption",
    "tag_address", "tag_body", "same_class_log", "class_written",
    // its ancestors
    "in_list", "in_table", "in_form", "in_figure", "in_heading", "in_semantic", "in_junk_tag", "in_header",
    "in_soft_junk", "in_quote", "in_address", "in_caption", "in_hidden", "in_noscript", "depth",
    // levels up to the nearest class/id word of each kind (vocab)
    "near_comment", "near_share", "near_related", "near_nav", "near_frame", "near_ad", "near_meta",
    "near_side", "near_content", "near_title", "near_lead", "near_hide",
    // its containers
    "parent_ld", "parent_chars_log", "gparent_ld", "gparent_chars_log", "share_of_parent",
    "parent_links_log", "parent_items_log", "parent_written", "gparent_written",
    // Readability's rules
    "written", "in_roots", "excluded", "cand_score", "cand_levels", "top_levels", "attempt", "lca_up",
    "lca_down",
    // neighbours
    "prev_chars_log", "prev_ld", "prev_written", "next_chars_log", "next_ld", "next_written",
    // place on the page
    "position", "since_h1", "headline_up", "headline_lca_depth", "written_before", "written_after", "region_dist", "before_region", "after_region", "chars_to_region_log",
    // the page
    "page_chars_log", "page_units_log", "written_share", "page_ld", "top_ld", "share_of_longest",
    "longest_unwritten",
];
/// Number of features.
pub const N: usize = 100;

fn heading_level(tag: Tag) -> f32 {
    match tag {
        Tag::H1 => 1.0,
        Tag::H2 => 2.0,
        Tag::H3 => 3.0,
        Tag::H4 => 4.0,
        Tag::H5 => 5.0,
        Tag::H6 => 6.0,
        _ => 0.0,
    }
}

impl Page<'_> {
    /// The feature vector of unit `u`, in [`FEATURES`]' order.
    pub fn features(&self, u: usize, f: &mut [f32; N]) {
        let unit = &self.units[u];
        let nodes = &self.doc.nodes;
        let block = unit.block as usize;
        let c = &self.ctx[block];
        let tag = nodes[block].tag;
        let words = unit.words.max(1);
        let flag = |bit: u16| f32::from(u8::from(c.flags & bit != 0));
        let is = |b: bool| f32::from(u8::from(b));
        let parent = nodes[block].parent as usize;
        let gparent = nodes[parent].parent as usize;
        let (ps, gs) = (self.sub[parent], self.sub[gparent]);
        let rules = self.rules_view(u);
        let headline = self.headline_lca(u);
        let region = self.region(u);
        let neighbour = |v: Option<usize>| match v {
            Some(v) => {
                let x = &self.units[v];
                [
                    ln1p(x.chars),
                    ratio(x.link, x.chars),
                    ratio(self.written[v], x.chars),
                ]
            }
            None => [0.0, 0.0, 0.0],
        };
        let prev = neighbour(u.checked_sub(1));
        let next = neighbour(Some(u + 1).filter(|&v| v < self.units.len()));
        let mut near = [0f32; KINDS];
        for (k, d) in near.iter_mut().enumerate() {
            *d = f32::from(c.near[k]);
        }
        *f = [
            ln1p(unit.chars),
            ln1p(unit.words),
            ratio(unit.link, unit.chars),
            ratio(unit.short_words, words),
            ratio(unit.capitalized, words),
            ratio(unit.digits, unit.chars),
            ratio(unit.stops, words),
            ratio(unit.commas, words),
            is(unit.ends_sentence),
            is(unit.copyright),
            is(unit.at_sign),
            unit.controls.min(5) as f32,
            ratio(unit.chars, words).min(30.0),
            self.head_match(u, false),
            self.head_match(u, true),
            ln1p(self.same_text[u] - 1),
            f32::from(unit.lex.prompts.min(5)),
            f32::from(unit.lex.services.min(5)),
            is(unit.lex.prompt_first),
            f32::from(unit.lex.bios.min(5)),
            is(tag == Tag::P),
            is(tag == Tag::Li),
            is(matches!(tag, Tag::Td | Tag::Th)),
            heading_level(tag),
            is(matches!(tag, Tag::Dd | Tag::Dt)),
            is(matches!(
                tag,
                Tag::Div | Tag::Section | Tag::Article | Tag::Main | Tag::Center
            )),
            is(matches!(tag, Tag::Blockquote | Tag::Pre)),
            is(matches!(tag, Tag::Figcaption | Tag::Caption)),
            is(tag == Tag::Address),
            is(matches!(tag, Tag::Body | Tag::Html | Tag::Root)),
            ln1p(self.same_class[u] - 1),
            self.class_written[u],
            flag(units::IN_LIST),
            flag(units::IN_TABLE),
            flag(units::IN_FORM),
            flag(units::IN_FIGURE),
            flag(units::IN_HEADING),
            flag(units::IN_SEMANTIC),
            flag(units::IN_JUNK_TAG),
            flag(units::IN_HEADER),
            flag(units::IN_SOFT_JUNK),
            flag(units::IN_QUOTE),
            flag(units::IN_ADDRESS),
            flag(units::IN_CAPTION),
            flag(units::IN_HIDDEN),
            flag(units::IN_NOSCRIPT),
            f32::from(c.depth.min(60)),
            near[0],
            near[1],
            near[2],
            near[3],
            near[4],
            near[5],
            near[6],
            near[7],
            near[8],
            near[9],
            near[10],
            near[11],
            ratio(ps.link, ps.chars),
            ln1p(ps.chars),
            ratio(gs.link, gs.chars),
            ln1p(gs.chars),
            ratio(unit.chars, ps.chars).min(1.0),
            ln1p(ps.links),
            ln1p(ps.items),
            self.parent_written[u][0],
            self.parent_written[u][1],
            ratio(self.written[u], unit.chars),
            rules[0],
            rules[1],
            rules[2],
            rules[3],
            rules[4],
            self.attempt,
            rules[6],
            rules[7],
            prev[0],
            prev[1],
            prev[2],
            next[0],
            next[1],
            next[2],
            ratio(unit.offset, self.total_chars),
            f32::from(self.since_h1[u]),
            headline[0],
            headline[1],
            f32::from(self.written_before[u]),
            self.written_after(u),
            region[0],
            region[1],
            region[2],
            region[3],
            ln1p(self.total_chars),
            ln1p(self.units.len() as u32),
            ratio(self.written_chars, self.total_chars),
            ratio(self.sub[0].link, self.sub[0].chars),
            rules[5],
            ratio(unit.chars, self.longest[0]),
            ratio(self.longest[1], self.longest[0]),
        ];
    }
}

/// What the features read beyond the unit itself: the page's head, the rules' pick, the headline, the region
/// the rules write.
impl Page<'_> {
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
        // memchr's substring search, not a window compare at every offset: this ran for most units of a page
        // against the title and the description (~3 % of `blocks: model`)
        let hit = !t.is_empty()
            && (memchr::memmem::find(head, t).is_some()
                || memchr::memmem::find(t, probe).is_some());
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
