//! The units the block model judges: runs of text under one block element, in document order, with the
//! counts their features are made of, and what each node's ancestors say about it.
//!
//! A unit is what a reader sees as one paragraph, item, cell or heading: the text nodes whose nearest block
//! ancestor is the same element, up to the next block element that starts or ends (so `<div>lede<p>body</p>
//! tail</div>` gives three units: `lede`, `body`, `tail`). Hidden subtrees give none. Everything here is one
//! pre-order pass, linear in the page.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::html::dom::{Doc, ARTICLE_BODY, HARD_JUNK, HIDDEN, SOFT_JUNK};
use crate::html::lexicon;
use crate::html::tags::Tag;
use crate::html::vocab::KINDS;

/// What a node's ancestors (and itself) are: bits of [`Ctx::flags`].
pub const IN_LINK: u16 = 1;
pub const IN_LIST: u16 = 1 << 1;
pub const IN_TABLE: u16 = 1 << 2;
pub const IN_FORM: u16 = 1 << 3;
pub const IN_FIGURE: u16 = 1 << 4;
pub const IN_HEADING: u16 = 1 << 5;
/// `<article>`, `<main>` or `itemprop="articleBody"`.
pub const IN_SEMANTIC: u16 = 1 << 6;
/// Furniture by tag or ARIA role (`<nav>`, `<aside>`, `<footer>`, `role="complementary"`...).
pub const IN_JUNK_TAG: u16 = 1 << 7;
pub const IN_HEADER: u16 = 1 << 8;
/// Readability's unlikely class words ([`crate::html::dom::SOFT_JUNK`]).
pub const IN_SOFT_JUNK: u16 = 1 << 9;
pub const IN_QUOTE: u16 = 1 << 10;
pub const IN_HIDDEN: u16 = 1 << 11;
pub const IN_ADDRESS: u16 = 1 << 12;
pub const IN_CAPTION: u16 = 1 << 13;
pub const IN_NOSCRIPT: u16 = 1 << 14;

/// Levels up to the nearest ancestor-or-self of a kind, when none is within reach.
pub const FAR: u8 = 31;

/// One node's view of its ancestors.
#[derive(Clone, Copy)]
pub struct Ctx {
    /// Nearest block element, itself included (0: the root).
    pub block: u32,
    pub depth: u16,
    pub flags: u16,
    /// Levels up to the nearest ancestor-or-self whose class or id has a word of each [`crate::html::vocab`]
    /// kind (0: the node itself), [`FAR`] when there is none.
    pub near: [u8; KINDS],
}

const ROOT_CTX: Ctx = Ctx {
    block: 0,
    depth: 0,
    flags: 0,
    near: [FAR; KINDS],
};

/// [`Ctx`] of every node of `doc`, by one pass down the tree.
pub fn contexts(doc: &Doc) -> Vec<Ctx> {
    let nodes = &doc.nodes;
    let mut ctx = vec![ROOT_CTX; nodes.len()];
    for i in 1..nodes.len() {
        let n = &nodes[i];
        let p = ctx[n.parent as usize];
        let mut c = Ctx {
            block: if n.tag.is_block() { i as u32 } else { p.block },
            depth: p.depth.saturating_add(1),
            flags: p.flags,
            near: p.near,
        };
        for (k, d) in c.near.iter_mut().enumerate() {
            *d = if n.kinds & (1 << k) != 0 {
                0
            } else {
                d.saturating_add(1).min(FAR)
            };
        }
        c.flags |= match n.tag {
            Tag::A => IN_LINK,
            Tag::Ul | Tag::Ol | Tag::Li | Tag::Dl | Tag::Menu => IN_LIST,
            Tag::Table | Tag::Td | Tag::Th => IN_TABLE,
            Tag::Form | Tag::Fieldset => IN_FORM,
            Tag::Figure => IN_FIGURE,
            Tag::Figcaption | Tag::Caption => IN_CAPTION,
            t if t.is_heading() => IN_HEADING,
            Tag::Article | Tag::Main => IN_SEMANTIC,
            Tag::Header => IN_HEADER,
            Tag::Blockquote => IN_QUOTE,
            Tag::Address => IN_ADDRESS,
            Tag::Noscript => IN_NOSCRIPT,
            _ => 0,
        };
        if n.flags & ARTICLE_BODY != 0 {
            c.flags |= IN_SEMANTIC;
        }
        if n.flags & HIDDEN != 0 {
            c.flags |= IN_HIDDEN;
        } else if n.flags & HARD_JUNK != 0 {
            c.flags |= IN_JUNK_TAG;
        }
        if n.flags & SOFT_JUNK != 0 {
            c.flags |= IN_SOFT_JUNK;
        }
        ctx[i] = c;
    }
    ctx
}

/// A hidden inline element inside a unit (a screen-reader label, a tooltip): its text is left out. A hidden
/// block gives units of its own, flagged [`IN_HIDDEN`], for the model to judge (a gallery's slides and an
/// accordion's panels are hidden until clicked, a consent dialog until scripts show it).
pub fn skipped_inline(doc: &Doc, i: usize) -> bool {
    let n = &doc.nodes[i];
    n.flags & HIDDEN != 0 && !n.tag.is_block()
}

/// A run of text under one block element, and its counts.
#[derive(Clone, Copy, Default, Debug)]
pub struct Unit {
    /// The block element the text belongs to.
    pub block: u32,
    /// First text node of the run.
    pub first: u32,
    /// One past the last node of the run.
    pub end: u32,
    pub chars: u32,
    /// Characters inside links.
    pub link: u32,
    pub words: u32,
    /// Words of at most three characters (function words, in most languages that space words).
    pub short_words: u32,
    /// Words that start with a capital letter.
    pub capitalized: u32,
    pub digits: u32,
    /// Sentence ends: `.`, `!`, `?` (and the CJK full stops) before a space or the end.
    pub stops: u32,
    pub commas: u32,
    /// Buttons and form fields in the run.
    pub controls: u32,
    /// The text ends like a sentence (`.`, `!`, `?`, `:`, a closing quote or CJK stop).
    pub ends_sentence: bool,
    /// `©` or `@` in the text: copyright lines and addresses.
    pub copyright: bool,
    pub at_sign: bool,
    /// Characters of text before this unit.
    pub offset: u32,
    /// Hash of the text (xxh3 of its text nodes), to find text repeated on the page.
    pub hash: u64,
    /// Furniture phrases in the text ([`lexicon`]).
    pub lex: lexicon::Hits,
}

fn is_upper_start(word: &[u8]) -> bool {
    match word.first() {
        Some(b) if b.is_ascii() => b.is_ascii_uppercase(),
        Some(_) => {
            let head = &word[..word.len().min(4)];
            let s = match std::str::from_utf8(head) {
                Ok(s) => s,
                Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
            };
            s.chars().next().is_some_and(char::is_uppercase)
        }
        None => false,
    }
}

const CJK_STOPS: [&[u8]; 3] = ["。".as_bytes(), "！".as_bytes(), "？".as_bytes()];

/// Add the counts of one text node to `u`.
fn count(u: &mut Unit, text: &[u8], in_link: bool) {
    let chars = text.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u32;
    u.chars += chars;
    if in_link {
        u.link += chars;
    }
    for word in text
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
    {
        u.words += 1;
        let len = word.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        if len <= 3 {
            u.short_words += 1;
        }
        if is_upper_start(word) {
            u.capitalized += 1;
        }
    }
    // one pass over the bytes (the CJK stops and the copyright sign are matched by their UTF-8 lead bytes here
    // rather than by a window search each: three scans of every unit's text were ~2 % of `blocks: model`)
    let mut cjk_stop = false;
    for (i, &b) in text.iter().enumerate() {
        match b {
            b'0'..=b'9' => u.digits += 1,
            b',' => u.commas += 1,
            b'.' | b'!' | b'?' if text.get(i + 1).is_none_or(|c| c.is_ascii_whitespace()) => {
                u.stops += 1
            }
            b'@' => u.at_sign = true,
            0xC2 if text.get(i + 1) == Some(&0xA9) => u.copyright = true,
            0xE3 | 0xEF => {
                let seq = &text[i..text.len().min(i + 3)];
                cjk_stop |= CJK_STOPS.contains(&seq);
            }
            _ => {}
        }
    }
    if cjk_stop {
        u.stops += 1;
    }
    let t = text.trim_ascii_end();
    if !t.is_empty() {
        let closers: [&[u8]; 8] = [
            b".",
            b"!",
            b"?",
            b":",
            b"\"",
            "”".as_bytes(),
            "“".as_bytes(),
            "»".as_bytes(),
        ];
        u.ends_sentence =
            closers.iter().any(|c| t.ends_with(c)) || CJK_STOPS.iter().any(|c| t.ends_with(c));
    }
}

/// The units of `doc` in document order.
pub fn units(doc: &Doc, ctx: &[Ctx]) -> Vec<Unit> {
    let nodes = &doc.nodes;
    let mut out: Vec<Unit> = Vec::new();
    let mut open = false;
    let mut offset = 0u32;
    let mut i = 1;
    while i < nodes.len() {
        let n = &nodes[i];
        if skipped_inline(doc, i) {
            i = n.end as usize;
            continue;
        }
        match n.tag {
            Tag::Text => {
                let block = ctx[i].block;
                if !open || out.last().is_none_or(|u| u.block != block) {
                    out.push(Unit {
                        block,
                        first: i as u32,
                        offset,
                        ..Unit::default()
                    });
                    open = true;
                }
                let u = out.last_mut().expect("pushed");
                let before = u.chars;
                let text = doc.text_of(n);
                lexicon::count(text, u.chars == 0, &mut u.lex);
                count(u, text, ctx[i].flags & IN_LINK != 0);
                u.hash = xxh3_64_with_seed(text.trim_ascii(), u.hash);
                offset += u.chars - before;
                u.end = i as u32 + 1;
            }
            Tag::Button | Tag::Input => {
                if let Some(u) = out.last_mut().filter(|_| open) {
                    u.controls += 1;
                }
            }
            t if t.is_block() => open = false,
            _ => {}
        }
        i += 1;
    }
    // a run of spaces alone (between inline elements) is no unit
    out.retain(|u| u.words > 0);
    out
}
