//! The attributes of the tag being read: the few the extractor uses, filed by name as html5gum hands them
//! over, and what `<meta>` and `<link>` attributes say about the page.
//!
//! Kept apart from the tree builder because it is a different job: the builder decides where nodes go, this
//! decides which attribute bytes are worth keeping (first occurrence wins, lower-cased where matching is
//! case-blind) so the builder's per-tag work reads fixed fields instead of an attribute list.

use super::builder::{push_collapsed, Builder};

/// The current start tag's attributes, by the names the extractor reads.
#[derive(Default)]
pub(super) struct Attrs {
    name: Vec<u8>,
    pub(super) class: Vec<u8>,
    pub(super) id: Vec<u8>,
    pub(super) role: Vec<u8>,
    pub(super) style: Vec<u8>,
    pub(super) itemprop: Vec<u8>,
    rel: Vec<u8>,
    href: Vec<u8>,
    meta_name: Vec<u8>,
    content: Vec<u8>,
    pub(super) lang: Vec<u8>,
    pub(super) kind: Vec<u8>,
    pub(super) hidden: bool,
}

impl Attrs {
    pub(super) fn clear(&mut self) {
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

/// The class attribute as a nonzero key (0 = no class): content compares classes (the sibling bonus) by it.
pub(super) fn class_hash(class: &[u8]) -> u32 {
    if class.is_empty() {
        return 0;
    }
    (xxhash_rust::xxh3::xxh3_64(class) as u32).max(1)
}

impl Builder {
    pub(super) fn meta(&mut self) {
        let a = &self.attrs;
        let desc = a.meta_name == b"description" || a.meta_name == b"og:description";
        if desc && (self.doc.description.is_empty() || a.meta_name == b"description") {
            self.doc.description.clear();
            push_collapsed(&mut self.doc.description, &a.content, false);
        }
    }

    pub(super) fn link(&mut self) {
        let a = &self.attrs;
        if self.doc.canonical.is_empty()
            && a.rel
                .split(|b| b.is_ascii_whitespace())
                .any(|r| r == b"canonical")
        {
            self.doc.canonical = a.href.trim_ascii().to_vec();
        }
    }

    /// File the attribute just read under the names the extractor uses (first occurrence wins).
    pub(super) fn flush_attribute(&mut self) {
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
}
