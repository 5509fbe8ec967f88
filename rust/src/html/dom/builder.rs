//! Tree construction: the open-element stack and the rules that decide where each tag and text run goes.
//!
//! The emitter feeds tags and text here; this applies the implied end tags, scope boundaries, the depth cap
//! and subtree skipping described in [`super`], flags furniture as nodes are made, and collapses
//! whitespace into the page's one text buffer.

use super::attrs::{class_hash, role_class, Attrs};
use super::{Doc, Node, ARTICLE_BODY, HARD_JUNK, HIDDEN, MAX_DEPTH, PRESENTATION, SOFT_JUNK};
use crate::html::furniture::{class_words, role_is_boilerplate, style_hides};
use crate::html::tags::{tag_of, Tag, TAG_COUNT};
use crate::html::vocab;

/// Builds one page's [`Doc`]; `emitter` makes it html5gum's emitter and `attrs` fills in [`Attrs`].
pub(super) struct Builder {
    pub(super) doc: Doc,
    /// Fill each element's [`Node::kinds`] (only the block model reads them).
    kinds: bool,
    stack: Vec<u32>,
    open: [u32; TAG_COUNT],
    /// Start tags not pushed because the stack was full; their end tags are absorbed first.
    overflow: u32,
    /// Inside a skipped element: its tag name and how many of it are open.
    skip: Option<(Vec<u8>, u32)>,
    in_title: bool,
    title_done: bool,
    pre_depth: u32,
    pub(super) tag: Vec<u8>,
    pub(super) is_end_tag: bool,
    pub(super) self_closing: bool,
    pub(super) last_start_tag: Vec<u8>,
    pub(super) attr_name: Vec<u8>,
    pub(super) attr_value: Vec<u8>,
    pub(super) attrs: Attrs,
}

/// Append `src` to `dst` with runs of whitespace collapsed to one space (`keep_lines`: newlines kept), and
/// without the characters that are never seen: soft hyphens (`&shy;`, which hyphenated sites put inside
/// every long word), zero-width spaces, word joiners and byte-order marks. Left in, they split words for
/// any later search or tokenizer (`Mag\u{ad}da\u{ad}le\u{ad}ner` is not `Magdalener`).
pub(super) fn push_collapsed(dst: &mut Vec<u8>, src: &[u8], keep_lines: bool) {
    let mut space = dst.last().is_some_and(|&b| b == b' ' || b == b'\n');
    let mut i = 0;
    while i < src.len() {
        let b = src[i];
        i += 1;
        if b.is_ascii_whitespace() {
            if keep_lines && b == b'\n' {
                if dst.last() == Some(&b' ') {
                    dst.pop();
                }
                dst.push(b'\n');
                space = true;
            } else if !space {
                dst.push(b' ');
                space = true;
            }
            continue;
        }
        let invisible = match b {
            0xC2 => src.get(i) == Some(&0xAD),
            0xE2 => matches!(src.get(i..i + 2), Some([0x80, 0x8B]) | Some([0x81, 0xA0])),
            0xEF => src.get(i..i + 2) == Some(&[0xBB, 0xBF]),
            _ => false,
        };
        if invisible {
            i += if b == 0xC2 { 1 } else { 2 };
            continue;
        }
        dst.push(b);
        space = false;
    }
}

impl Builder {
    pub(super) fn new(cap: usize, kinds: bool) -> Self {
        let mut b = Builder {
            doc: Doc::default(),
            kinds,
            stack: vec![0],
            open: [0; TAG_COUNT],
            overflow: 0,
            skip: None,
            in_title: false,
            title_done: false,
            pre_depth: 0,
            tag: Vec::new(),
            is_end_tag: false,
            self_closing: false,
            last_start_tag: Vec::new(),
            attr_name: Vec::new(),
            attr_value: Vec::new(),
            attrs: Attrs::default(),
        };
        b.doc.nodes.reserve(cap / 40);
        b.doc.text.reserve(cap / 4);
        b.doc.nodes.push(Node {
            tag: Tag::Root,
            flags: 0,
            weight: 0,
            kinds: 0,
            parent: 0,
            end: 0,
            a: 0,
            b: 0,
        });
        b
    }

    fn top(&self) -> u32 {
        *self.stack.last().expect("root stays on the stack")
    }

    fn pop(&mut self) {
        if self.stack.len() <= 1 {
            return;
        }
        let i = self.stack.pop().expect("checked") as usize;
        let end = self.doc.nodes.len() as u32;
        let n = &mut self.doc.nodes[i];
        n.end = end;
        self.open[n.tag as usize] -= 1;
        if n.tag == Tag::Pre {
            self.pre_depth -= 1;
        }
    }

    /// Pop up to and including the nearest open `tags` element, unless a scope boundary comes first.
    fn close(&mut self, tags: &[Tag]) {
        self.close_within(tags, &[]);
    }

    /// [`Self::close`] that also stops at `containers`: a new `<li>` closes the open `<li>` of its own list
    /// only, never one of an outer list (an `<ol>` of bylines inside a related-links `<li>` must not close
    /// the `<aside>` and the article around it: the HTML standard's list scope).
    fn close_within(&mut self, tags: &[Tag], containers: &[Tag]) {
        if tags.iter().all(|t| self.open[*t as usize] == 0) {
            return;
        }
        let nodes = &self.doc.nodes;
        let pos = self.stack.iter().rposition(|&i| {
            let t = nodes[i as usize].tag;
            tags.contains(&t) || t.is_scope_boundary() || containers.contains(&t)
        });
        if let Some(p) = pos {
            if tags.contains(&nodes[self.stack[p] as usize].tag) {
                while self.stack.len() > p {
                    self.pop();
                }
            }
        }
    }

    pub(super) fn start_tag(&mut self, self_closing: bool) {
        let name = std::mem::take(&mut self.tag);
        if let Some((skip, depth)) = &mut self.skip {
            if *skip == name && !self_closing {
                *depth += 1;
            }
            self.tag = name;
            return;
        }
        let mut tag = tag_of(&name);
        if tag == Tag::Input && self.attrs.kind == b"hidden" {
            tag = Tag::OtherVoid; // invisible: no form control to count against the block
        }
        match tag {
            Tag::Skip if !self_closing => self.skip = Some((name.clone(), 1)),
            Tag::Title if !self.title_done => self.in_title = true,
            Tag::Html if self.doc.lang.is_empty() => self.doc.lang = self.attrs.lang.clone(),
            Tag::Meta => self.meta(),
            Tag::Link => self.link(),
            _ => {}
        }
        self.tag = name;
        if matches!(
            tag,
            Tag::Skip | Tag::Title | Tag::Meta | Tag::Link | Tag::Head
        ) {
            return;
        }
        // A second `<html>` or `<body>` (a CMS fragment pasted whole into the page) makes no element: the HTML
        // standard merges its attributes into the open one. Pushed, it was a scope boundary no `</div>` could
        // close past, and the rest of the page nested inside whatever was open (a menu, the header).
        if matches!(tag, Tag::Html | Tag::Body) && self.open[tag as usize] > 0 {
            return;
        }
        use Tag::*;
        match tag {
            Li => self.close_within(&[Li], &[Ul, Ol, Menu]),
            Dd | Dt => self.close_within(&[Dd, Dt], &[Dl]),
            Td | Th => self.close(&[Td, Th]),
            Tr => self.close(&[Tr]),
            Tbody | Thead | Tfoot => self.close(&[Tbody, Thead, Tfoot]),
            A => self.close(&[A]),
            _ => {}
        }
        if tag.closes_p() {
            self.close(&[P]);
        }
        if tag.is_heading() && self.doc.nodes[self.top() as usize].tag.is_heading() {
            self.pop();
        }
        if self.stack.len() >= MAX_DEPTH && !tag.is_void() {
            self.overflow += 1;
            return;
        }
        let a = &self.attrs;
        let mut flags = 0;
        if a.hidden || (!a.style.is_empty() && style_hides(&a.style)) {
            flags |= HARD_JUNK | HIDDEN;
        }
        // `<noscript>` is parsed for the block model (a fallback copy of a script-rendered article is there),
        // but the rules never score it: most of it is tracking pixels and "enable JavaScript" prompts
        if tag.is_boilerplate() || tag == Noscript || role_is_boilerplate(&a.role) {
            flags |= HARD_JUNK;
        }
        let class = role_class(&a.class);
        let words = class_words(&class, &a.id);
        if !matches!(tag, Body | Html | A) && (tag == Header || words.unlikely) {
            flags |= SOFT_JUNK;
        }
        if a.itemprop.windows(11).any(|w| w == b"articlebody") {
            flags |= ARTICLE_BODY;
            flags &= !SOFT_JUNK;
        }
        if tag == Table && a.role == b"presentation" {
            flags |= PRESENTATION;
        }
        let idx = self.doc.nodes.len() as u32;
        self.doc.nodes.push(Node {
            tag,
            flags,
            weight: words.weight,
            kinds: if self.kinds {
                vocab::kinds(&class) | vocab::kinds(&a.id)
            } else {
                0
            },
            parent: self.top(),
            end: idx + 1,
            a: class_hash(&a.class),
            b: 0,
        });
        if !tag.is_void() && !self_closing || tag.is_scope_boundary() {
            self.stack.push(idx);
            self.open[tag as usize] += 1;
            if tag == Pre {
                self.pre_depth += 1;
            }
        }
    }

    pub(super) fn end_tag(&mut self, name: &[u8]) {
        if let Some((skip, depth)) = &mut self.skip {
            if skip == name {
                *depth -= 1;
                if *depth == 0 {
                    self.skip = None;
                }
            }
            return;
        }
        let tag = tag_of(name);
        match tag {
            Tag::Title => {
                if self.in_title {
                    self.in_title = false;
                    self.title_done = !self.doc.title.trim_ascii().is_empty();
                }
                return;
            }
            Tag::Br => {
                // `</br>` is a line break (HTML standard)
                self.attrs.clear();
                self.tag = b"br".to_vec();
                return self.start_tag(false);
            }
            _ => {}
        }
        // `</body>` and `</html>` close nothing: what follows them still goes into the body (the HTML standard's
        // "after body" mode), and the end of the page closes every element anyway. Honoured, one in the middle
        // of a page (a pasted fragment's) closed the page's open sections and left the rest outside them.
        if self.open[tag as usize] == 0 || matches!(tag, Tag::Html | Tag::Body) {
            return;
        }
        if self.overflow > 0 {
            self.overflow -= 1;
            return;
        }
        self.close(&[tag]);
    }

    pub(super) fn string(&mut self, value: &[u8]) {
        if self.skip.is_some() {
            return;
        }
        if self.in_title {
            push_collapsed(&mut self.doc.title, value, false);
            return;
        }
        let parent = self.top();
        let last = self.doc.nodes.len() - 1;
        let start = self.doc.text.len();
        push_collapsed(&mut self.doc.text, value, self.pre_depth > 0);
        let end = self.doc.text.len() as u32;
        let n = &mut self.doc.nodes[last];
        if n.tag == Tag::Text && n.parent == parent && n.b as usize == start {
            n.b = end;
            return;
        }
        if self.doc.text[start..].iter().all(|&b| b == b' ')
            && self.doc.text[..start].last().is_none_or(|&b| b == b' ')
        {
            self.doc.text.truncate(start);
            return;
        }
        let idx = self.doc.nodes.len() as u32;
        self.doc.nodes.push(Node {
            tag: Tag::Text,
            flags: 0,
            weight: 0,
            kinds: 0,
            parent,
            end: idx + 1,
            a: start as u32,
            b: end,
        });
    }

    pub(super) fn take_doc(&mut self) -> Doc {
        while self.stack.len() > 1 {
            self.pop();
        }
        let mut doc = std::mem::take(&mut self.doc);
        doc.nodes[0].end = doc.nodes.len() as u32;
        doc
    }
}
