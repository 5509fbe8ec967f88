//! The class/id/role/style vocabulary of page furniture, kept apart from the tag table because it is
//! matched text, not a property of a tag.
//!
//! The words follow Mozilla Readability's (`unlikelyCandidates`, `positive`, `negative`, `unlikelyRoles`),
//! as word lists matched by one Aho-Corasick automaton per class/id string; the tree builder calls these
//! once per start tag to set a node's junk flags and class weight. Sites name classes in their own
//! language (`kommentare`, `contenu`, `relacionados`, pinyin `pinglun`), so each list also carries the same
//! words in the web's large European languages and the transliterations Russian and Chinese sites use; each
//! foreign word sits in the lists its English word is in.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

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
    // the same in other languages
    "kommentar",
    "commentaire",
    "comentario",
    "komentarz",
    "commento",
    "commenti",
    "reactie",
    "pinglun",
    "verwandt",
    "aehnliche",
    "empfehlung",
    "connexe",
    "similaire",
    "relacionad",
    "powiazane",
    "correlati",
    "gerelateerd",
    "pohozhie",
    "xiangguan",
    "teilen",
    "partage",
    "compartir",
    "compartilhar",
    "udostepnij",
    "condividi",
    "fenxiang",
    "fusszeile",
    "pied-de-page",
    "pie-de-pagina",
    "rodape",
    "stopka",
    "podval",
    "werbung",
    "publicite",
    "publicidad",
    "pubblicita",
    "reklama",
    "advertentie",
    "guanggao",
    "seitenleiste",
    "barra-lateral",
    "kopfzeile",
    "cabecera",
    "cabecalho",
    "naglowek",
    "en-tete",
    "shapka",
    "daohang",
    "fil-ariane",
    "migas",
    "brotkrume",
    "abonn",
];
/// Words that keep an element that also has an unlikely word (`main-header-content` wraps the article).
const MAYBE: &[&str] = &[
    "article",
    "body",
    "column",
    "content",
    "main",
    "story",
    "shadow",
    // the same in other languages
    "inhalt",
    "contenu",
    "contenido",
    "conteudo",
    "contenuto",
    "inhoud",
    "tresc",
    "soderzhan",
    "neirong",
    "artikel",
    "articulo",
    "articolo",
    "artykul",
    "statya",
    "wenzhang",
    "zhengwen",
    "cuerpo",
    "corpo",
    "corps",
    "testo",
    "tekst",
    "haupt",
    "principal",
];
const POSITIVE: &[&str] = &[
    "article",
    "body",
    "content",
    "entry",
    "hentry",
    "h-entry",
    "main",
    "page",
    "post",
    "text",
    "blog",
    "story",
    // the same in other languages
    "inhalt",
    "contenu",
    "contenido",
    "conteudo",
    "contenuto",
    "inhoud",
    "tresc",
    "soderzhan",
    "neirong",
    "artikel",
    "articulo",
    "articolo",
    "artykul",
    "statya",
    "wenzhang",
    "zhengwen",
    "cuerpo",
    "corpo",
    "corps",
    "testo",
    "tekst",
    "haupt",
    "principal",
    "beitrag",
    "noticia",
    "nachricht",
    "novost",
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
    // the same in other languages
    "kommentar",
    "commentaire",
    "comentario",
    "komentarz",
    "commento",
    "commenti",
    "reactie",
    "pinglun",
    "verwandt",
    "aehnliche",
    "empfehlung",
    "connexe",
    "similaire",
    "relacionad",
    "powiazane",
    "correlati",
    "gerelateerd",
    "pohozhie",
    "xiangguan",
    "teilen",
    "partage",
    "compartir",
    "compartilhar",
    "udostepnij",
    "condividi",
    "fenxiang",
    "fusszeile",
    "pied-de-page",
    "pie-de-pagina",
    "rodape",
    "stopka",
    "podval",
    "werbung",
    "publicite",
    "publicidad",
    "pubblicita",
    "reklama",
    "advertentie",
    "guanggao",
    "seitenleiste",
    "barra-lateral",
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
        assert!(class_words(b"site-footer", b"").unlikely);
        assert!(class_words(b"", b"cookie-banner").unlikely);
        assert!(!class_words(b"main-header-content", b"").unlikely);
        assert!(!class_words(b"entry", b"").unlikely);
        assert!(!class_words(b"header", b"content").unlikely);
        assert_eq!(class_words(b"post-body", b"").weight, 25);
        assert_eq!(class_words(b"share-widget", b"comments").weight, -50);
        assert_eq!(class_words(b"", b"").weight, 0);
        assert!(class_words(b"kommentare", b"").unlikely);
        assert!(!class_words(b"kopfzeile-inhalt", b"").unlikely);
        assert_eq!(class_words(b"contenido-noticia", b"").weight, 25);
        assert_eq!(class_words(b"pinglun", b"").weight, -25);
        assert!(role_is_boilerplate(b"navigation"));
        assert!(!role_is_boilerplate(b"main"));
        assert!(style_hides(b"color: red; Display: None"));
        assert!(!style_hides(b"display:block"));
    }
}
