//! A light document tree built from html5gum's WHATWG tokens.
//!
//! Not the standard's full tree construction (that is what makes html5ever cost as much as a whole
//! extraction): the builder keeps the parts that decide where text belongs -- void elements, the implied
//! end tags of `p`, `li`, `dd`/`dt`, table rows and cells, end tags that cannot close past a table, and
//! whole-subtree skipping of scripts, styles, SVG and form controls. Nodes sit in pre-order in one arena
//! and each records where its subtree ends, so every later pass is a flat loop (no recursion, whatever the
//! nesting depth). Nesting deeper than [`MAX_DEPTH`] is flattened: those tags add no nodes.

use std::time::Instant;

use html5gum::Tokenizer;

mod emitter;

use super::furniture::{class_words, role_is_boilerplate, style_hides};
use super::tags::{tag_of, Tag, TAG_COUNT};

/// Open elements kept at most; deeper tags are flattened into the deepest one.
pub const MAX_DEPTH: usize = 512;
/// Tags and text runs between two looks at the clock.
const CLOCK_EVERY: u32 = 4096;

/// Removed in every pass: tag, ARIA role or inline style says page furniture or hidden.
pub const HARD_JUNK: u8 = 1;
/// Removed while "strip unlikely" is on: class/id words of page furniture, `<header>`.
pub const SOFT_JUNK: u8 = 2;
/// `itemprop="articleBody"`: schema.org says this is the article.
pub const ARTICLE_BODY: u8 = 4;
/// `role="presentation"` on a table (a layout table).
pub const PRESENTATION: u8 = 8;

#[derive(Debug, Clone)]
pub struct Node {
    pub tag: Tag,
    pub flags: u8,
    /// Readability class weight (-50..=50).
    pub weight: i8,
    pub parent: u32,
    /// One past the last node of this subtree.
    pub end: u32,
    /// Text nodes: byte range in [`Doc::text`]; elements: hash of the class attribute (0 = none).
    pub a: u32,
    pub b: u32,
}

/// The tree of one page plus what the head says about it.
#[derive(Debug, Default)]
pub struct Doc {
    pub nodes: Vec<Node>,
    /// Text of all text nodes, whitespace runs collapsed to one space (kept inside `<pre>`).
    pub text: Vec<u8>,
    pub title: Vec<u8>,
    pub lang: Vec<u8>,
    pub canonical: Vec<u8>,
    pub description: Vec<u8>,
    /// The time budget ran out: the tree holds the page up to that point.
    pub truncated: bool,
}

impl Doc {
    pub fn text_of(&self, n: &Node) -> &[u8] {
        &self.text[n.a as usize..n.b as usize]
    }
}

#[derive(Default)]
struct Attrs {
    name: Vec<u8>,
    class: Vec<u8>,
    id: Vec<u8>,
    role: Vec<u8>,
    style: Vec<u8>,
    itemprop: Vec<u8>,
    rel: Vec<u8>,
    href: Vec<u8>,
    meta_name: Vec<u8>,
    content: Vec<u8>,
    lang: Vec<u8>,
    kind: Vec<u8>,
    hidden: bool,
}

impl Attrs {
    fn clear(&mut self) {
        for v in [
            &mut self.name,
            &mut self.class,
            &mut self.id,
            &mut self.role,
            &mut self.style,
            &mut self.itemprop,
            &mut self.rel,
            &mut self.href,
            &mut self.meta_name,
            &mut self.content,
            &mut self.lang,
            &mut self.kind,
        ] {
            v.clear();
        }
        self.hidden = false;
    }
}

struct Builder {
    doc: Doc,
    stack: Vec<u32>,
    open: [u32; TAG_COUNT],
    /// Start tags not pushed because the stack was full; their end tags are absorbed first.
    overflow: u32,
    /// Inside a skipped element: its tag name and how many of it are open.
    skip: Option<(Vec<u8>, u32)>,
    in_title: bool,
    title_done: bool,
    pre_depth: u32,
    tag: Vec<u8>,
    is_end_tag: bool,
    self_closing: bool,
    last_start_tag: Vec<u8>,
    attr_name: Vec<u8>,
    attr_value: Vec<u8>,
    attrs: Attrs,
    events: u32,
    tick: bool,
}

fn class_hash(class: &[u8]) -> u32 {
    if class.is_empty() {
        return 0;
    }
    (xxhash_rust::xxh3::xxh3_64(class) as u32).max(1)
}

/// Append `src` to `dst` with runs of whitespace collapsed to one space (`keep_lines`: newlines kept).
fn push_collapsed(dst: &mut Vec<u8>, src: &[u8], keep_lines: bool) {
    let mut space = dst.last().is_some_and(|&b| b == b' ' || b == b'\n');
    for &b in src {
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
        } else {
            dst.push(b);
            space = false;
        }
    }
}

impl Builder {
    fn new(cap: usize) -> Self {
        let mut b = Builder {
            doc: Doc::default(),
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
            events: 0,
            tick: false,
        };
        b.doc.nodes.reserve(cap / 40);
        b.doc.text.reserve(cap / 4);
        b.doc.nodes.push(Node {
            tag: Tag::Root,
            flags: 0,
            weight: 0,
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
        if tags.iter().all(|t| self.open[*t as usize] == 0) {
            return;
        }
        let nodes = &self.doc.nodes;
        let pos = self.stack.iter().rposition(|&i| {
            let t = nodes[i as usize].tag;
            tags.contains(&t) || t.is_scope_boundary()
        });
        if let Some(p) = pos {
            if tags.contains(&nodes[self.stack[p] as usize].tag) {
                while self.stack.len() > p {
                    self.pop();
                }
            }
        }
    }

    fn start_tag(&mut self, self_closing: bool) {
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
        use Tag::*;
        match tag {
            Li => self.close(&[Li]),
            Dd | Dt => self.close(&[Dd, Dt]),
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
        if tag.is_boilerplate()
            || a.hidden
            || role_is_boilerplate(&a.role)
            || (!a.style.is_empty() && style_hides(&a.style))
        {
            flags |= HARD_JUNK;
        }
        let words = class_words(&a.class, &a.id);
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

    fn meta(&mut self) {
        let a = &self.attrs;
        let desc = a.meta_name == b"description" || a.meta_name == b"og:description";
        if desc && (self.doc.description.is_empty() || a.meta_name == b"description") {
            self.doc.description.clear();
            push_collapsed(&mut self.doc.description, &a.content, false);
        }
    }

    fn link(&mut self) {
        let a = &self.attrs;
        if self.doc.canonical.is_empty()
            && a.rel
                .split(|b| b.is_ascii_whitespace())
                .any(|r| r == b"canonical")
        {
            self.doc.canonical = a.href.trim_ascii().to_vec();
        }
    }

    fn end_tag(&mut self, name: &[u8]) {
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
        if self.open[tag as usize] == 0 {
            return;
        }
        if self.overflow > 0 {
            self.overflow -= 1;
            return;
        }
        self.close(&[tag]);
    }

    fn string(&mut self, value: &[u8]) {
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
            parent,
            end: idx + 1,
            a: start as u32,
            b: end,
        });
    }

    /// File the attribute just read under the names the extractor uses (first occurrence wins).
    fn flush_attribute(&mut self) {
        if self.attr_name.is_empty() {
            return;
        }
        let a = &mut self.attrs;
        let value = &self.attr_value;
        let (dst, lower) = match self.attr_name.as_slice() {
            b"class" => (&mut a.class, true),
            b"id" => (&mut a.id, true),
            b"role" => (&mut a.role, true),
            b"style" => (&mut a.style, true),
            b"itemprop" => (&mut a.itemprop, true),
            b"rel" => (&mut a.rel, true),
            b"name" | b"property" => (&mut a.meta_name, true),
            b"href" => (&mut a.href, false),
            b"content" => (&mut a.content, false),
            b"lang" => (&mut a.lang, false),
            b"type" => (&mut a.kind, true),
            b"hidden" => {
                a.hidden = true;
                return self.attr_name.clear();
            }
            b"aria-hidden" => {
                a.hidden |= value.eq_ignore_ascii_case(b"true");
                return self.attr_name.clear();
            }
            _ => return self.attr_name.clear(),
        };
        if dst.is_empty() {
            if lower {
                dst.extend(value.iter().map(u8::to_ascii_lowercase));
            } else {
                dst.extend_from_slice(value);
            }
        }
        self.attr_name.clear();
    }

    fn count_event(&mut self) {
        self.events += 1;
        if self.events.is_multiple_of(CLOCK_EVERY) {
            self.tick = true;
        }
    }

    fn take_doc(&mut self) -> Doc {
        while self.stack.len() > 1 {
            self.pop();
        }
        let mut doc = std::mem::take(&mut self.doc);
        doc.nodes[0].end = doc.nodes.len() as u32;
        doc
    }
}

/// Parse `html` (UTF-8, invalid bytes tolerated) into a [`Doc`], giving up at `deadline`.
pub fn parse(html: &[u8], deadline: Option<Instant>) -> Doc {
    let mut builder = Builder::new(html.len());
    let mut truncated = false;
    for _ in Tokenizer::new_with_emitter(html, &mut builder) {
        if deadline.is_some_and(|d| Instant::now() > d) {
            truncated = true;
            break;
        }
    }
    let mut doc = builder.take_doc();
    doc.truncated = truncated;
    doc
}
