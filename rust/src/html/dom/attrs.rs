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

/// The class tokens that say what an element *is*: `class` without the tokens a CMS writes for the post's
/// categories and tags (`category-<slug>`, `tag-<slug>`: WordPress's `post_class`/`body_class`, and the
/// themes and engines that copy them), which name what the post is *about*. A post filed under
/// "empfehlungen" (German: recommendations) or tagged "comments" or "sponsored" otherwise reads as a
/// recommendations box, a comment thread or an ad to the furniture lists and the block model, and the
/// article is dropped. Taken out only beside a token that marks the element as a post (`hentry`, `type-*`,
/// `status-*`, `format-*`, `postid-*`, `post-<number>`), so a `tag-cloud` or `category-list` box keeps its words.
pub(super) fn role_class(class: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    use std::borrow::Cow;
    let taxonomy =
        |t: &[u8]| t.len() > 4 && (t.starts_with(b"category-") || t.starts_with(b"tag-"));
    if memchr::memmem::find(class, b"tag-").is_none()
        && memchr::memmem::find(class, b"category-").is_none()
    {
        return Cow::Borrowed(class); // nearly every element: one scan, no allocation
    }
    let tokens = || {
        class
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
    };
    let post = tokens().any(|t| {
        t == b"hentry"
            || [&b"type-"[..], b"status-", b"format-", b"postid-"]
                .iter()
                .any(|p| t.starts_with(p))
            || t.strip_prefix(b"post-")
                .is_some_and(|n| !n.is_empty() && n.iter().all(u8::is_ascii_digit))
    });
    if !post || !tokens().any(taxonomy) {
        return Cow::Borrowed(class);
    }
    Cow::Owned(
        tokens()
            .filter(|t| !taxonomy(t))
            .collect::<Vec<_>>()
            .join(&b' '),
    )
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

#[cfg(test)]
mod tests {
    use super::role_class;

    #[test]
    fn taxonomy_tokens_leave_a_post_class_only() {
        let post = b"card post-7 type-post hentry category-empfehlungen tag-kommentar tag-x";
        assert_eq!(&*role_class(post), &b"card post-7 type-post hentry"[..]);
        // no post marker beside them: the words stay (a tag cloud, a category menu)
        assert_eq!(&*role_class(b"widget tag-cloud"), &b"widget tag-cloud"[..]);
        assert_eq!(&*role_class(b"category-list nav"), &b"category-list nav"[..]);
        assert_eq!(&*role_class(b"post-body tag-related"), &b"post-body tag-related"[..]);
        assert_eq!(&*role_class(b""), &b""[..]);
    }
}
