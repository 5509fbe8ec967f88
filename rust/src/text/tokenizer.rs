//! Word tokens as DataTrove counts them, without spaCy.
//!
//! English: a port of spaCy 3.8's `blank("en")` tokenizer (whitespace splitting, the special-case table,
//! prefix / suffix / infix rules and the URL matcher, data in `tables.rs`). Its one omission is the
//! phrase-matcher pass that re-merges special cases broken up by affix splitting (e.g. an emoticon glued
//! to a word): rare in web text, and measured in the agreement benchmark. Other languages: Unicode word
//! boundaries (UAX #29), each non-space segment a token.

use std::sync::OnceLock;

use unicode_segmentation::UnicodeSegmentation;
use xxhash_rust::xxh3::Xxh3DefaultBuilder;

use super::affixes::{find_prefix, find_suffix, infix_at, url_match};
use super::chars::is_space;
use super::tables as t;

/// Which tokenizer a statistic uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// spaCy `blank("en")` rules.
    English,
    /// Unicode word segmentation.
    Unicode,
}

impl Lang {
    /// `en` (and `eng`, `en_*`) picks the spaCy port; any other code Unicode segmentation.
    pub fn from_code(code: &str) -> Self {
        let c = code.to_ascii_lowercase();
        if c == "en"
            || c == "eng"
            || c.starts_with("en_")
            || c.starts_with("en-")
            || c.starts_with("eng_")
        {
            Lang::English
        } else {
            Lang::Unicode
        }
    }
}

/// Call `f(token, is_space_token)` for every token of `text` in order. Space tokens are the runs of
/// whitespace spaCy keeps as tokens (DataTrove strips them away; spaCy's sentencizer sees them).
pub fn tokenize<'a>(text: &'a str, lang: Lang, f: &mut impl FnMut(&'a str, bool)) {
    match lang {
        Lang::English => spacy_tokenize(text, f),
        Lang::Unicode => {
            for seg in text.split_word_bounds() {
                f(seg, seg.chars().all(is_space));
            }
        }
    }
}

/// DataTrove's `split_into_words`: the non-space tokens.
pub fn words<'a>(text: &'a str, lang: Lang, out: &mut Vec<&'a str>) {
    out.clear();
    tokenize(text, lang, &mut |w, sp| {
        if !sp {
            out.push(w)
        }
    });
}

fn spacy_tokenize<'a>(text: &'a str, f: &mut impl FnMut(&'a str, bool)) {
    let Some(first) = text.chars().next() else {
        return;
    };
    let mut in_ws = is_space(first);
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if is_space(c) != in_ws {
            if start < i {
                span(&text[start..i], f);
            }
            start = if c == ' ' { i + 1 } else { i };
            in_ws = !in_ws;
        }
    }
    if start < text.len() {
        span(&text[start..], f);
    }
}

fn span<'a>(s: &'a str, f: &mut impl FnMut(&'a str, bool)) {
    if s.starts_with(is_space) {
        // a whitespace run: one token (the special-case table maps single spaces to themselves)
        f(s, true);
        return;
    }
    // fast path: a plain word (ASCII letters only) that is no special case is one token, as no prefix, suffix,
    // infix or URL rule can match it
    if s.bytes().all(|b| b.is_ascii_alphabetic()) && !is_special(s) {
        f(s, false);
        return;
    }
    let mut toks: Vec<&'a str> = Vec::new();
    affix_tokens(s, true, &mut toks);
    if toks.len() > 1 {
        merge_specials(s, &mut toks);
    }
    for t in toks {
        f(t, false);
    }
}

/// spaCy's `_tokenize` of one whitespace-free span; `specials` = `with_special_cases`.
fn affix_tokens<'a>(s: &'a str, specials: bool, out: &mut Vec<&'a str>) {
    if specials && emit_special(s, &mut |t, _| out.push(t)) {
        return;
    }
    let mut prefixes: Vec<&'a str> = Vec::new();
    let mut suffixes: Vec<&'a str> = Vec::new();
    let core = split_affixes(s, specials, &mut prefixes, &mut suffixes);
    out.extend_from_slice(&prefixes);
    let special_core = !core.is_empty() && specials && emit_special(core, &mut |t, _| out.push(t));
    if !core.is_empty() && !special_core {
        if url_match(core) {
            out.push(core);
        } else {
            infixes(core, &mut |t, _| out.push(t));
        }
    }
    out.extend(suffixes.iter().rev());
}

/// Special cases that affix splitting breaks apart (spaCy's `_special_matcher`): key -> byte lengths of the
/// tokens affix splitting makes of it, which a run of tokens must repeat exactly to be re-tokenized.
fn matcher_specials() -> &'static Map<Vec<usize>> {
    static MAP: OnceLock<Map<Vec<usize>>> = OnceLock::new();
    MAP.get_or_init(|| {
        t::EXC_KEYS
            .iter()
            .filter(|k| !k.contains(is_space))
            .filter(|k| find_prefix(k) > 0 || find_suffix(k) > 0 || has_infix(k))
            .map(|&k| {
                let mut toks = Vec::new();
                affix_tokens(k, false, &mut toks);
                (k, toks.iter().map(|t| t.len()).collect())
            })
            .collect()
    })
}

fn has_infix(s: &str) -> bool {
    let mut prev = None;
    s.char_indices().any(|(i, c)| {
        let hit = infix_at(s, i, prev) > 0;
        prev = Some(c);
        hit
    })
}

/// spaCy's `_apply_special_cases` within one whitespace-free span: runs of tokens spelling a special case the
/// way affix splitting spells it are replaced by the special case's tokens, longest runs first, then leftmost.
fn merge_specials<'a>(s: &'a str, toks: &mut Vec<&'a str>) {
    let table = matcher_specials();
    let base = s.as_ptr() as usize;
    let off = |t: &str| t.as_ptr() as usize - base;
    let n = toks.len();
    let mut found: Vec<(usize, usize)> = Vec::new(); // (start, end) token indices
    for i in 0..n {
        for j in i + 1..=n.min(i + 8) {
            let text = &s[off(toks[i])..off(toks[j - 1]) + toks[j - 1].len()];
            if let Some(lens) = table.get(text) {
                if lens.len() == j - i && lens.iter().zip(&toks[i..j]).all(|(l, t)| *l == t.len()) {
                    found.push((i, j));
                }
            }
        }
    }
    if found.is_empty() {
        return;
    }
    // longest first; equal lengths, leftmost first; a span is taken when neither end token is taken yet
    found.sort_by(|a, b| (b.1 - b.0).cmp(&(a.1 - a.0)).then(a.0.cmp(&b.0)));
    let mut seen = vec![false; n];
    let mut chosen: Vec<(usize, usize)> = Vec::new();
    for (a, b) in found {
        if !seen[a] && !seen[b - 1] {
            chosen.push((a, b));
        }
        seen[a..b].iter_mut().for_each(|x| *x = true);
    }
    chosen.sort_unstable();
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    for (a, b) in chosen {
        out.extend_from_slice(&toks[i..a]);
        let text = &s[off(toks[a])..off(toks[b - 1]) + toks[b - 1].len()];
        emit_special(text, &mut |t, _| out.push(t));
        i = b;
    }
    out.extend_from_slice(&toks[i..]);
    *toks = out;
}

type Map<V> = std::collections::HashMap<&'static str, V, Xxh3DefaultBuilder>;

fn specials() -> &'static Map<&'static str> {
    static MAP: OnceLock<Map<&'static str>> = OnceLock::new();
    MAP.get_or_init(|| {
        t::EXC_KEYS
            .iter()
            .copied()
            .zip(t::EXC_TOKENS.iter().copied())
            .collect()
    })
}

#[inline]
fn is_special(s: &str) -> bool {
    specials().contains_key(s)
}

/// Emit the tokens of a special case (their texts concatenate to the key, so they are slices of `s`).
fn emit_special<'a>(s: &'a str, f: &mut impl FnMut(&'a str, bool)) -> bool {
    let Some(toks) = specials().get(s) else {
        return false;
    };
    let mut at = 0;
    for tok in toks.split('\u{1}') {
        let end = (at + tok.len()).min(s.len());
        if end > at && s.is_char_boundary(end) {
            f(&s[at..end], false);
        }
        at = end;
    }
    true
}

/// spaCy's `_split_affixes` loop.
fn split_affixes<'a>(
    mut s: &'a str,
    specials: bool,
    prefixes: &mut Vec<&'a str>,
    suffixes: &mut Vec<&'a str>,
) -> &'a str {
    let is_special = |x: &str| specials && is_special(x);
    let mut last_len = usize::MAX;
    while !s.is_empty() && s.len() != last_len {
        if is_special(s) {
            break;
        }
        last_len = s.len();
        let pre = find_prefix(s);
        if pre > 0 {
            let minus_pre = &s[pre..];
            if !minus_pre.is_empty() && is_special(minus_pre) {
                prefixes.push(&s[..pre]);
                s = minus_pre;
                break;
            }
        }
        let suf = find_suffix(&s[pre..]);
        if suf > 0 {
            let minus_suf = &s[..s.len() - suf];
            if !minus_suf.is_empty() && is_special(minus_suf) {
                suffixes.push(&s[s.len() - suf..]);
                s = minus_suf;
                break;
            }
        }
        if pre > 0 && suf > 0 && pre + suf <= s.len() {
            prefixes.push(&s[..pre]);
            suffixes.push(&s[s.len() - suf..]);
            s = &s[pre..s.len() - suf];
        } else if pre > 0 {
            prefixes.push(&s[..pre]);
            s = &s[pre..];
        } else if suf > 0 {
            suffixes.push(&s[s.len() - suf..]);
            s = &s[..s.len() - suf];
        }
    }
    s
}

/// spaCy's infix splitting of what the affix loop left (`find_infix` + `_attach_tokens`).
fn infixes<'a>(s: &'a str, f: &mut impl FnMut(&'a str, bool)) {
    let mut start = 0;
    let mut p = 0;
    let mut prev: Option<char> = None;
    while p < s.len() {
        let m = infix_at(s, p, prev);
        if m == 0 {
            let c = s[p..].chars().next().unwrap_or(' ');
            prev = Some(c);
            p += c.len_utf8();
            continue;
        }
        if p != 0 {
            if p != start {
                f(&s[start..p], false);
            }
            f(&s[p..p + m], false);
            start = p + m;
        }
        prev = s[..p + m].chars().next_back();
        p += m;
    }
    if start < s.len() {
        f(&s[start..], false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<&str> {
        let mut v = Vec::new();
        words(s, Lang::English, &mut v);
        v
    }

    #[test]
    fn spacy_examples() {
        assert_eq!(toks("Hello, world!"), ["Hello", ",", "world", "!"]);
        assert_eq!(toks("Don't stop."), ["Do", "n't", "stop", "."]);
        assert_eq!(toks("(e.g. this)"), ["(", "e.g.", "this", ")"]);
        assert_eq!(
            toks("well-known U.S. firm's $5.00"),
            ["well", "-", "known", "U.S.", "firm", "'s", "$", "5.00"]
        );
        assert_eq!(toks("wait...what"), ["wait", "...", "what"]);
        assert_eq!(
            toks("see example.com/a/b now"),
            ["see", "example.com/a/b", "now"]
        );
        assert_eq!(toks("10km away"), ["10", "km", "away"]);
        assert_eq!(
            toks("a 2-liter 6.99-a"),
            ["a", "2", "-", "liter", "6.99", "-", "a"]
        );
        assert_eq!(toks("a\n\nb  c"), ["a", "b", "c"]);
        assert_eq!(toks("x=y."), ["x", "=", "y."]); // re-merged by the special-case matcher
    }

    #[test]
    fn unicode_words() {
        let mut v = Vec::new();
        words("Grüße, Welt! 你好", Lang::Unicode, &mut v);
        assert_eq!(v, ["Grüße", ",", "Welt", "!", "你", "好"]);
    }
}
