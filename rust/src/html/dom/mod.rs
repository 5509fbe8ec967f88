//! A light document tree built from html5gum's WHATWG tokens.
//!
//! Not the standard's full tree construction (that is what makes html5ever cost as much as a whole
//! extraction): the builder keeps the parts that decide where text belongs -- void elements, the implied
//! end tags of `p`, `li`, `dd`/`dt`, table rows and cells, end tags that cannot close past a table, and
//! whole-subtree skipping of scripts, styles, SVG and form controls. Nodes sit in pre-order in one arena
//! and each records where its subtree ends, so every later pass is a flat loop (no recursion, whatever the
//! nesting depth). Nesting deeper than [`MAX_DEPTH`] is flattened: those tags add no nodes.
//!
//! This module holds the tree's types and [`parse`]; `builder` is the tree construction, `attrs` keeps the
//! attributes it reads, and `emitter` plugs the builder into html5gum's tokenizer.

use html5gum::Tokenizer;

mod attrs;
mod builder;
mod emitter;

use super::tags::Tag;
use builder::Builder;

/// Open elements kept at most; deeper tags are flattened into the deepest one.
pub const MAX_DEPTH: usize = 512;

/// Removed in every pass: tag, ARIA role or inline style says page furniture or hidden.
pub const HARD_JUNK: u8 = 1;
/// Removed while "strip unlikely" is on: class/id words of page furniture, `<header>`.
pub const SOFT_JUNK: u8 = 2;
/// `itemprop="articleBody"`: schema.org says this is the article.
pub const ARTICLE_BODY: u8 = 4;
/// `role="presentation"` on a table (a layout table).
pub const PRESENTATION: u8 = 8;
/// Not shown: `hidden`, `aria-hidden="true"` or an inline style that hides it (also [`HARD_JUNK`]).
pub const HIDDEN: u8 = 16;

#[derive(Debug, Clone)]
pub struct Node {
    pub tag: Tag,
    pub flags: u8,
    /// Readability class weight (-50..=50).
    pub weight: i8,
    /// What the class and id words say the element is ([`crate::html::vocab`] bits; 0 for text).
    pub kinds: u16,
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
}

impl Doc {
    pub fn text_of(&self, n: &Node) -> &[u8] {
        &self.text[n.a as usize..n.b as usize]
    }
}

/// Parse `html` (UTF-8, invalid bytes tolerated) into a [`Doc`], with [`Node::kinds`] filled.
pub fn parse(html: &[u8]) -> Doc {
    parse_with(html, true)
}

/// Parse `html`; `kinds`: fill [`Node::kinds`] (else 0). Only the block model reads the kinds, and matching
/// every class and id against the vocabulary's few hundred words was a quarter of the rules' own time
/// (`perf record` on 150 labelled pages: `try_find_overlapping_fwd` the kernel's top symbol), so the rules
/// alone skip it.
pub fn parse_with(html: &[u8], kinds: bool) -> Doc {
    let mut builder = Builder::new(html.len(), kinds);
    for _ in Tokenizer::new_with_emitter(html, &mut builder) {}
    builder.take_doc()
}
