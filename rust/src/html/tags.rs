//! What each HTML tag is to the extractor: the tags it tells apart and their roles.
//!
//! Tag roles follow the HTML standard (void elements, raw-text elements, the elements that close an open
//! `<p>`, scope boundaries) plus the two facts Readability keys by tag alone (a container's starting score,
//! tags that are furniture whatever their attributes). What an element's class, id, role and style say is
//! in [`super::furniture`]: that is vocabulary matching, not a table of tags.

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
    /// `<noscript>`: parsed as markup (what a reader without scripts sees), its content flagged.
    Noscript,
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
        b"noscript" => Noscript,
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
        b"script" | b"style" | b"svg" | b"math" | b"canvas" | b"select" | b"textarea"
        | b"audio" | b"video" | b"map" | b"noembed" | b"noframes" | b"frameset" | b"datalist"
        | b"applet" | b"picture" | b"plaintext" | b"rt" | b"rp" => Skip,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_tags() {
        assert_eq!(tag_of(b"div"), Tag::Div);
        assert_eq!(tag_of(b"script"), Tag::Skip);
        assert_eq!(tag_of(b"custom-el"), Tag::Other);
    }
}
