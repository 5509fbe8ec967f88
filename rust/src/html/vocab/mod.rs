//! What an element's class and id words say it is, by kind: comments, sharing, related links, navigation,
//! page header/footer, ads and prompts, metadata (byline, date, caption), sidebars, the content itself, titles,
//! leads. The block model ([`super::content::model`]) reads, for each block, how far up its nearest ancestor
//! of each kind is: that is how it learns that a byline box or a "read also" list is not the article, in any
//! language the lists carry.
//!
//! Unlike [`super::furniture`] (Readability's own lists, which decide exclusion), these are features: a
//! false match costs little, as the model weighs it with everything else. Each kind lists the English word
//! and the same in the web's large European languages (German, French, Spanish, Italian, Portuguese, Polish,
//! Dutch) and the transliterations Russian and Chinese sites use. Words of four letters or fewer match whole
//! class tokens only (`ad`, `nav`, `tags`: `ad` must not match `shadow`, nor `nav` `canvas`); longer words
//! match inside a token too (`comment` in `postcomments`).

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind};

mod words;
use words::WORDS;

/// The kinds, one bit each.
pub const COMMENT: u16 = 1;
pub const SHARE: u16 = 1 << 1;
pub const RELATED: u16 = 1 << 2;
pub const NAV: u16 = 1 << 3;
pub const FRAME: u16 = 1 << 4;
pub const AD: u16 = 1 << 5;
pub const META: u16 = 1 << 6;
pub const SIDE: u16 = 1 << 7;
pub const CONTENT: u16 = 1 << 8;
pub const TITLE: u16 = 1 << 9;
pub const LEAD: u16 = 1 << 10;
pub const HIDE: u16 = 1 << 11;
/// Number of kinds (the bits above).
pub const KINDS: usize = 12;

/// Longest word that matches whole tokens only.
const SHORT: usize = 4;

struct Vocab {
    ac: AhoCorasick,
    kind: Vec<u16>,
    short: Vec<bool>,
}

fn vocab() -> &'static Vocab {
    static V: OnceLock<Vocab> = OnceLock::new();
    V.get_or_init(|| {
        let mut words: Vec<&str> = Vec::new();
        let mut kind: Vec<u16> = Vec::new();
        for (bit, list) in WORDS {
            for w in *list {
                match words.iter().position(|x| x == w) {
                    Some(i) => kind[i] |= bit,
                    None => {
                        words.push(w);
                        kind.push(*bit);
                    }
                }
            }
        }
        let short = words.iter().map(|w| w.len() <= SHORT).collect();
        // a DFA: every element's class and id go through it, and it is ~2x the default NFA's speed here
        let ac = AhoCorasickBuilder::new()
            .kind(Some(AhoCorasickKind::DFA))
            .build(&words)
            .expect("a few hundred literal words build");
        Vocab { ac, kind, short }
    })
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphabetic() || b >= 0x80
}

/// The kinds whose words occur in `s` (a lower-case class or id attribute).
pub fn kinds(s: &[u8]) -> u16 {
    if s.is_empty() {
        return 0;
    }
    let v = vocab();
    let mut out = 0;
    for m in v.ac.find_overlapping_iter(s) {
        let i = m.pattern().as_usize();
        if v.short[i] {
            let before = m.start() > 0 && is_word_byte(s[m.start() - 1]);
            // a short word may be followed by digits or a plural `s` (`ad1`, `tags`), not by more letters
            let rest = &s[m.end()..];
            let after = rest.first().is_some_and(|&b| is_word_byte(b))
                && (rest.first() != Some(&b's') || rest.get(1).is_some_and(|&b| is_word_byte(b)));
            if before || after {
                continue;
            }
        }
        out |= v.kind[i];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_class_words() {
        assert_eq!(kinds(b"post-comments"), COMMENT | CONTENT);
        assert_eq!(kinds(b"shadow canvas"), 0);
        assert_eq!(kinds(b"ad-slot"), AD);
        assert_eq!(kinds(b"ads"), AD);
        assert_eq!(kinds(b"kommentare"), COMMENT);
        assert_eq!(kinds(b"entry-meta"), CONTENT | META);
        assert_eq!(kinds(b"artikel-vorspann"), CONTENT | LEAD);
        assert!(kinds(b"sidebar-widget") & SIDE != 0);
        assert_eq!(kinds(b""), 0);
    }
}
