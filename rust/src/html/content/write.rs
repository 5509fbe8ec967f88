//! Writing the chosen subtrees out as paragraphs, dropping what Readability's conditional cleaning drops.

use super::Pass;
use crate::html::dom::PRESENTATION;
use crate::html::tags::Tag;
use crate::html::Favor;

impl Pass<'_> {
    fn in_figure(&self, i: usize) -> bool {
        let nodes = &self.doc.nodes;
        let mut a = nodes[i].parent as usize;
        while a != 0 {
            if nodes[a].tag == Tag::Figure {
                return true;
            }
            a = nodes[a].parent as usize;
        }
        false
    }

    /// Readability's `_cleanConditionally`, with the link-density rule applied to lists as well.
    pub(super) fn looks_like_furniture(&self, i: usize) -> bool {
        let node = &self.doc.nodes[i];
        if !matches!(
            node.tag,
            Tag::Form
                | Tag::Fieldset
                | Tag::Table
                | Tag::Ul
                | Tag::Ol
                | Tag::Div
                | Tag::Section
                | Tag::Dl
        ) {
            return false;
        }
        let s = &self.sums[i];
        if node.tag == Tag::Table
            && node.flags & PRESENTATION == 0
            && s.tables == 1
            && self.has_data_table_signs(i)
        {
            return false; // a data table
        }
        // Readability's `weight + contentScore < 0` reads a content score of 0 here: the class decides.
        // A node's own score would drop every list of one or two short items (a `<ul>` starts at -3, each
        // item adds about 1), the bullet points German and English articles alike put between paragraphs.
        let weight = self.weight(i);
        if weight < 0.0 {
            return true;
        }
        if s.commas >= 10 {
            return false;
        }
        let is_list = matches!(node.tag, Tag::Ul | Tag::Ol);
        let (p, img) = (s.p as f32, s.img as f32);
        let li = s.li as f32 - 100.0;
        let ld = self.link_density(i);
        let chars = s.chars;
        let figure = img > 0.0 && self.in_figure(i);
        (!figure && img > 1.0 && p / img < 0.5)
            || (!is_list && li > p)
            || (s.input as f32 > (p / 3.0).floor())
            || (!is_list
                && chars < 25
                && (s.img == 0 || s.img > 2)
                && !figure
                && !self.is_short_sentence(i))
            || (weight < 25.0 && ld > if is_list { 0.5 } else { 0.2 })
            || (weight >= 25.0 && ld > 0.5)
            || (s.embed == 1 && chars < 75)
            || s.embed > 1
    }

    /// Readability's `_isDataTable` signs on a table: header cells or a caption, or 10 rows, or more than 4
    /// columns, or more than 10 cells. Readability never cleans such a table away; checking header cells
    /// alone dropped the many tables without `<th>` (a comparison grid of 24 rows and 9 columns, shop
    /// specifications of label and value cells) that hold an article's facts.
    pub(super) fn has_data_table_signs(&self, t: usize) -> bool {
        let nodes = &self.doc.nodes;
        if self.sums[t].th > 0 {
            return true;
        }
        let (mut rows, mut cols, mut cells) = (0u32, 0u32, 0u32);
        for n in &nodes[t + 1..nodes[t].end as usize] {
            match n.tag {
                Tag::Tr => {
                    rows += 1;
                    cells = 0;
                }
                Tag::Td | Tag::Th => {
                    cells += 1;
                    cols = cols.max(cells);
                }
                _ => {}
            }
        }
        rows >= 10 || cols > 4 || rows * cols > 10
    }

    /// A `<div>`/`<section>` (under 25 characters) whose text is one short sentence without links: a line of
    /// dialogue or a one-line reply, which fiction, forum posts and editor-written pages put in a `<div>` of
    /// its own (`<div><span>Er lachte.</span></div>`). Readability keeps such a line (it retags an inline
    /// div as a paragraph, and paragraphs are never cleaned); the 25-character rule is for labels, dates
    /// and ad slots (`Anzeige`, `Foto: dpa`, `04.12.2024`), which end without a sentence mark. Not under
    /// `Favor::Precision`.
    fn is_short_sentence(&self, i: usize) -> bool {
        let s = &self.sums[i];
        if self.favor == Favor::Precision || s.link != 0 || s.chars < 4 {
            return false;
        }
        let text = self.subtree_text(i);
        let t = text.trim_ascii();
        // closing quotes of any language: ” “ (German) » « ’ "
        let t = ["”", "“", "»", "«", "’", "\""]
            .iter()
            .find_map(|q| t.strip_suffix(q.as_bytes()))
            .unwrap_or(t);
        let ends = t.ends_with(b".")
            || t.ends_with(b"!")
            || t.ends_with(b"?")
            || t.ends_with("…".as_bytes());
        ends && t.contains(&b' ')
    }

    /// An `h1`/`h2` that repeats the page title, or whose class weight is negative.
    fn drop_heading(&self, i: usize, title: &[u8]) -> bool {
        let node = &self.doc.nodes[i];
        if !matches!(node.tag, Tag::H1 | Tag::H2) {
            return false;
        }
        if self.weight(i) < 0.0 {
            return true;
        }
        let text = self.subtree_text(i).to_ascii_lowercase();
        let text = text.trim_ascii();
        text.len() >= 10 && title.windows(text.len()).any(|w| w == text)
    }

    /// Write the kept text of `roots` as paragraphs separated by blank lines (lines by `\n`).
    pub(super) fn write(&self, roots: &[usize], out: &mut String) {
        let mut buf: Vec<u8> = Vec::new();
        self.walk(roots, |i, pending| {
            push_text(&mut buf, self.doc.text_of(&self.doc.nodes[i]), pending)
        });
        out.push_str(String::from_utf8_lossy(buf.trim_ascii()).as_ref());
    }

    /// Mark in `kept` (one flag per node) the text nodes [`Pass::write`] writes for `roots`.
    pub(super) fn mark(&self, roots: &[usize], kept: &mut [bool]) {
        self.walk(roots, |i, _| kept[i] = true);
    }

    /// Call `on(text node, pending break)` for every text node the chosen subtrees keep, in order; the break
    /// owed before it (0 none, 1 line, 2 paragraph) is `on`'s to clear once it writes text.
    fn walk(&self, roots: &[usize], mut on: impl FnMut(usize, &mut u8)) {
        let nodes = &self.doc.nodes;
        let title = self.doc.title.to_ascii_lowercase();
        for &root in roots {
            let mut pending = 2u8; // 0 none, 1 line break, 2 paragraph break
            let mut ends: Vec<(usize, u8)> = Vec::new();
            let mut i = root;
            let stop = nodes[root].end as usize;
            while i < stop {
                while let Some(&(e, sep)) = ends.last() {
                    if e > i {
                        break;
                    }
                    ends.pop();
                    pending = pending.max(sep);
                }
                let node = &nodes[i];
                if node.tag == Tag::Text {
                    if !self.excl[i] {
                        on(i, &mut pending);
                    }
                    i += 1;
                    continue;
                }
                if self.excl[i]
                    || (self.rules.clean_conditionally && i != root && self.looks_like_furniture(i))
                    || self.drop_heading(i, &title)
                {
                    i = node.end as usize;
                    continue;
                }
                let sep = match node.tag {
                    Tag::Br | Tag::Li | Tag::Td | Tag::Th | Tag::Tr | Tag::Dd | Tag::Dt => 1,
                    t if t.is_block() => 2,
                    _ => 0,
                };
                pending = pending.max(sep);
                if sep > 0 && (node.end as usize) > i + 1 {
                    ends.push((node.end as usize, sep));
                }
                i += 1;
            }
        }
    }
}

pub(super) fn push_text(buf: &mut Vec<u8>, text: &[u8], pending: &mut u8) {
    let at_start = buf.is_empty() || buf.last() == Some(&b'\n');
    let text = if at_start || *pending > 0 {
        text.trim_ascii_start()
    } else {
        text
    };
    if text.is_empty() {
        return;
    }
    if *pending > 0 && !buf.is_empty() {
        while buf.last().is_some_and(|b| *b == b' ') {
            buf.pop();
        }
        buf.extend_from_slice(if *pending == 2 { b"\n\n" } else { b"\n" });
    }
    *pending = 0;
    if buf.last() == Some(&b' ') && text[0] == b' ' {
        buf.extend_from_slice(&text[1..]);
    } else {
        buf.extend_from_slice(text);
    }
}
