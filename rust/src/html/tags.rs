//! What each HTML tag is to the extractor, and the class/id/role vocabulary of boilerplate.
//!
//! Tag roles follow the HTML standard (void elements, raw-text elements, the elements that close an open
//! `<p>`); the boilerplate vocabulary follows Mozilla Readability's (`unlikelyCandidates`, `positive`,
//! `negative`, `unlikelyRoles`), as word lists matched by one Aho-Corasick automaton per class/id string.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

/// The tags the extractor tells apart; every other tag is `Other` (an inline element).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Tag {
    Root,
    Text,
    Other,
    A,
    Address,
    Article,
    Aside,
    Blockquote,
    Body,
    Br,
    Button,
    Caption,
    Center,
    Code,
    Dd,
    Details,
    Dialog,
    Div,
    Dl,
    Dt,
    Embed,
    Fieldset,
    Figcaption,
    Figure,
    Footer,
    Form,
    H1,
    H2,
    H3,
    H4,
    H5,
    H6,
    Head,
    Header,
    Hgroup,
    Hr,
    Html,
    Iframe,
    Img,
    Input,
    Li,
    Link,
    Main,
    Marquee,
    Menu,
    Meta,
    Nav,
    Object,
    Ol,
    P,
    Pre,
    Section,
    Summary,
    Table,
    Tbody,
    Td,
    Template,
    Tfoot,
    Th,
    Thead,
    Title,
    Tr,
    Ul,
    /// Elements whose whole content is dropped (scripts, styles, SVG, form controls...).
    Skip,
    /// Void elements the extractor has no use for (`<wbr>`, `<source>`...).
    OtherVoid,
}

/// Number of `Tag` values (for per-tag counters).
pub const TAG_COUNT: usize = Tag::OtherVoid as usize + 1;

/// Map a lower-case tag name (html5gum lower-cases them) to its `Tag`.
pub fn tag_of(name: &[u8]) -> Tag {
    use Tag::*;
    match name {
        b"a" => A,
        b"address" => Address,
        b"article" => Article,
        b"aside" => Aside,
        b"blockquote" => Blockquote,
        b"body" => Body,
        b"br" => Br,
        b"button" => Button,
        b"caption" => Caption,
        b"center" => Center,
        b"code" => Code,
        b"dd" => Dd,
        b"details" => Details,
        b"dialog" => Dialog,
        b"div" => Div,
        b"dl" => Dl,
        b"dt" => Dt,
        b"embed" => Embed,
        b"fieldset" => Fieldset,
        b"figcaption" => Figcaption,
        b"figure" => Figure,
        b"footer" => Footer,
        b"form" => Form,
        b"h1" => H1,
        b"h2" => H2,
        b"h3" => H3,
        b"h4" => H4,
        b"h5" => H5,
        b"h6" => H6,
        b"head" => Head,
        b"header" => Header,
        b"hgroup" => Hgroup,
        b"hr" => Hr,
        b"html" => Html,
        b"iframe" => Iframe,
        b"img" | b"image" => Img,
        b"input" => Input,
        b"li" => Li,
        b"link" => Link,
        b"main" => Main,
        b"marquee" => Marquee,
        b"menu" => Menu,
        b"meta" => Meta,
        b"nav" => Nav,
        b"object" => Object,
        b"ol" => Ol,
        b"p" => P,
        b"pre" | b"listing" | b"xmp" => Pre,
        b"section" => Section,
        b"summary" => Summary,
        b"table" => Table,
        b"tbody" => Tbody,
        b"td" => Td,
        b"template" => Template,
        b"tfoot" => Tfoot,
        b"th" => Th,
        b"thead" => Thead,
        b"title" => Title,
        b"tr" => Tr,
        b"ul" => Ul,
        b"script" | b"style" | b"noscript" | b"svg" | b"math" | b"canvas" | b"select"
        | b"textarea" | b"audio" | b"video" | b"map" | b"noembed" | b"noframes" | b"frameset"
        | b"datalist" | b"applet" | b"picture" | b"plaintext" => Skip,
        b"area" | b"base" | b"col" | b"param" | b"source" | b"track" | b"wbr" | b"keygen"
        | b"basefont" | b"bgsound" | b"frame" => OtherVoid,
        _ => Other,
    }
}

impl Tag {
    /// Elements without content or end tag.
    pub fn is_void(self) -> bool {
        use Tag::*;
        matches!(
            self,
            Br | Embed | Hr | Img | Input | Link | Meta | OtherVoid
        )
    }

    /// Block-level: starts and ends a paragraph of the output text.
    #[rustfmt::skip]
    pub fn is_block(self) -> bool {
        use Tag::*;
        matches!(
            self,
            Root | Address | Article | Aside | Blockquote | Body | Caption | Center | Dd | Details | Dialog |
                Div | Dl | Dt | Fieldset | Figcaption | Figure | Footer | Form | H1 | H2 | H3 | H4 | H5 | H6 |
                Header | Hgroup | Hr | Html | Li | Main | Menu | Nav | Ol | P | Pre | Section | Summary |
                Table | Tbody | Td | Tfoot | Th | Thead | Tr | Ul
        )
    }

    /// Start tags that close an open `<p>` (HTML standard, "in body" insertion mode).
    #[rustfmt::skip]
    pub fn closes_p(self) -> bool {
        use Tag::*;
        matches!(
            self,
            Address | Article | Aside | Blockquote | Center | Details | Dialog | Div | Dl | Fieldset |
                Figcaption | Figure | Footer | Form | H1 | H2 | H3 | H4 | H5 | H6 | Header | Hgroup | Hr |
                Main | Menu | Nav | Ol | P | Pre | Section | Summary | Table | Ul | Li | Dd | Dt
        )
    }

    /// Elements an end tag may not close past (the standard's "has an element in scope" boundaries).
    pub fn is_scope_boundary(self) -> bool {
        use Tag::*;
        matches!(
            self,
            Root | Html | Table | Td | Th | Caption | Template | Object | Marquee
        )
    }

    pub fn is_heading(self) -> bool {
        use Tag::*;
        matches!(self, H1 | H2 | H3 | H4 | H5 | H6)
    }

    /// Readability's starting score of a candidate container by its tag.
    pub fn base_score(self) -> f32 {
        use Tag::*;
        match self {
            Div | Article | Main => 5.0,
            Pre | Td | Blockquote => 3.0,
            Address | Ol | Ul | Dl | Dd | Dt | Li | Form => -3.0,
            H1 | H2 | H3 | H4 | H5 | H6 | Th => -5.0,
            _ => 0.0,
        }
    }

    /// Boilerplate by its tag alone (navigation, asides, page footer, dialogs).
    pub fn is_boilerplate(self) -> bool {
        use Tag::*;
        matches!(self, Nav | Aside | Footer | Menu | Dialog)
    }
}

/// ARIA roles of page furniture (Readability's `unlikelyRoles` plus landmarks that are never the article).
pub fn role_is_boilerplate(role: &[u8]) -> bool {
    const ROLES: &[&[u8]] = &[
        b"menu",
        b"menubar",
        b"complementary",
        b"navigation",
        b"alert",
        b"alertdialog",
        b"dialog",
        b"banner",
        b"contentinfo",
        b"search",
        b"toolbar",
        b"tablist",
    ];
    role.split(|b| b.is_ascii_whitespace())
        .any(|r| ROLES.iter().any(|x| r.eq_ignore_ascii_case(x)))
}

/// class/id words of page furniture: comments, sharing, related links, cookie and newsletter prompts.
const UNLIKELY: &[&str] = &[
    "-ad-",
    "ad-break",
    "agegate",
    "banner",
    "breadcrumb",
    "combx",
    "comment",
    "community",
    "consent",
    "cookie",
    "cover-wrap",
    "disqus",
    "extra",
    "footer",
    "gdpr",
    "header",
    "legends",
    "menu",
    "newsletter",
    "pager",
    "pagination",
    "popup",
    "promo",
    "related",
    "remark",
    "replies",
    "rss",
    "share",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "social",
    "sponsor",
    "subscribe",
    "supplemental",
    "yom-remote",
    "modal",
    "masthead",
    "toolbar",
    "skip-link",
    "signup",
];
/// Words that keep an element that also has an unlikely word (`main-header-content` wraps the article).
const MAYBE: &[&str] = &[
    "article", "body", "column", "content", "main", "story", "shadow",
];
const POSITIVE: &[&str] = &[
    "article", "body", "content", "entry", "hentry", "h-entry", "main", "page", "post", "text",
    "blog", "story",
];
const NEGATIVE: &[&str] = &[
    "-ad-",
    "hidden",
    "banner",
    "combx",
    "comment",
    "com-",
    "contact",
    "footer",
    "gdpr",
    "masthead",
    "media",
    "meta",
    "outbrain",
    "promo",
    "related",
    "scroll",
    "share",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "sponsor",
    "shopping",
    "tags",
    "widget",
    "byline",
    "author",
    "caption",
    "credit",
    "cookie",
];

fn any_in(hay: &[u8], words: &[&str]) -> bool {
    words.iter().any(|w| memmem(hay, w.as_bytes()))
}

fn memmem(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len() && hay.windows(needle.len()).any(|win| win == needle)
}

const UNLIKELY_BIT: u8 = 1;
const MAYBE_BIT: u8 = 2;
const POSITIVE_BIT: u8 = 4;
const NEGATIVE_BIT: u8 = 8;

/// One automaton over every vocabulary word; each pattern carries the bits of the lists it is in.
fn vocabulary() -> &'static (AhoCorasick, Vec<u8>) {
    static AC: OnceLock<(AhoCorasick, Vec<u8>)> = OnceLock::new();
    AC.get_or_init(|| {
        let mut words: Vec<&str> = Vec::new();
        let mut bits: Vec<u8> = Vec::new();
        for (list, bit) in [
            (UNLIKELY, UNLIKELY_BIT),
            (MAYBE, MAYBE_BIT),
            (POSITIVE, POSITIVE_BIT),
            (NEGATIVE, NEGATIVE_BIT),
        ] {
            for w in list {
                match words.iter().position(|x| x == w) {
                    Some(i) => bits[i] |= bit,
                    None => {
                        words.push(w);
                        bits.push(bit);
                    }
                }
            }
        }
        let ac = AhoCorasick::new(&words).expect("a few dozen literal words build");
        (ac, bits)
    })
}

/// Which vocabulary lists have a word in `s` (lower-case class or id).
fn word_bits(s: &[u8]) -> u8 {
    if s.is_empty() {
        return 0;
    }
    let (ac, bits) = vocabulary();
    ac.find_overlapping_iter(s)
        .fold(0, |acc, m| acc | bits[m.pattern().as_usize()])
}

/// What an element's class and id say: page furniture (`unlikely`), and Readability's class weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassWords {
    pub unlikely: bool,
    pub weight: i8,
}

/// Judge lower-case `class` and `id`: unlikely when either has a furniture word and neither a content
/// word; the weight is +25 / -25 for each of class and id that looks like content / furniture.
pub fn class_words(class: &[u8], id: &[u8]) -> ClassWords {
    let (c, i) = (word_bits(class), word_bits(id));
    let both = c | i;
    let one = |b: u8| -> i8 {
        (if b & NEGATIVE_BIT != 0 { -25 } else { 0 }) + (if b & POSITIVE_BIT != 0 { 25 } else { 0 })
    };
    ClassWords {
        unlikely: both & UNLIKELY_BIT != 0 && both & MAYBE_BIT == 0,
        weight: one(c) + one(i),
    }
}

/// Inline style that hides the element (`display:none`, `visibility:hidden`), spaces ignored.
pub fn style_hides(style: &[u8]) -> bool {
    let squeezed: Vec<u8> = style
        .iter()
        .filter(|b| !b.is_ascii_whitespace())
        .map(u8::to_ascii_lowercase)
        .collect();
    any_in(&squeezed, &["display:none", "visibility:hidden"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary() {
        assert_eq!(tag_of(b"div"), Tag::Div);
        assert_eq!(tag_of(b"script"), Tag::Skip);
        assert_eq!(tag_of(b"custom-el"), Tag::Other);
        assert!(class_words(b"site-footer", b"").unlikely);
        assert!(class_words(b"", b"cookie-banner").unlikely);
        assert!(!class_words(b"main-header-content", b"").unlikely);
        assert!(!class_words(b"entry", b"").unlikely);
        assert!(!class_words(b"header", b"content").unlikely);
        assert_eq!(class_words(b"post-body", b"").weight, 25);
        assert_eq!(class_words(b"share-widget", b"comments").weight, -50);
        assert_eq!(class_words(b"", b"").weight, 0);
        assert!(role_is_boilerplate(b"navigation"));
        assert!(!role_is_boilerplate(b"main"));
        assert!(style_hides(b"color: red; Display: None"));
        assert!(!style_hides(b"display:block"));
    }
}
