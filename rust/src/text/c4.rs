//! C4's line cleaning and document rules (Raffel et al. 2020) as DataTrove 0.10.1's `C4QualityFilter`
//! applies them: lines removed for a too-long word, a missing terminal punctuation mark, too few words,
//! "javascript" or a cookie / terms phrase; citations removed; the document dropped for "lorem ipsum", a
//! curly bracket or fewer than `min_num_sentences` sentences left.

use super::chars::{char_len, is_punct_token, is_space, lower, py_strip, splitlines};
use super::tables;
use super::tokenizer::{tokenize, Lang};

/// `C4QualityFilter`'s constructor arguments (`-1` disables the numeric ones, as there).
#[derive(Debug, Clone)]
pub struct C4Params {
    pub split_paragraph: bool,
    pub remove_citations: bool,
    pub filter_no_terminal_punct: bool,
    pub min_num_sentences: i64,
    pub min_words_per_line: i64,
    pub max_word_length: i64,
    pub filter_lorem_ipsum: bool,
    pub filter_javascript: bool,
    pub filter_curly_bracket: bool,
    pub filter_policy: bool,
}

impl Default for C4Params {
    fn default() -> Self {
        Self {
            split_paragraph: true,
            remove_citations: true,
            filter_no_terminal_punct: true,
            min_num_sentences: 5,
            min_words_per_line: 3,
            max_word_length: 1000,
            filter_lorem_ipsum: true,
            filter_javascript: true,
            filter_curly_bracket: true,
            filter_policy: true,
        }
    }
}

/// Line counters, named as DataTrove's `stat_update` keys.
pub const COUNTERS: [&str; 7] = [
    "line-total",
    "line-filter-too_long_word",
    "line-filter-no_terminal_punc",
    "line-filter-too_few_words",
    "line-filter-javascript",
    "line-filter-policy",
    "line-kept",
];

pub type Counts = [u64; 7];

const POLICY: [&str; 6] = [
    "terms of use",
    "privacy policy",
    "cookie policy",
    "uses cookies",
    "use of cookies",
    "use cookies",
];

/// What C4 makes of one document: the cleaned text, or the reason it is dropped.
pub enum C4Result {
    Keep(String),
    Drop(&'static str),
}

/// Number of sentences spaCy's sentencizer finds in `s` (`len(split_into_sentences(s))`).
pub fn sentence_count(s: &str, lang: Lang) -> usize {
    let mut n = 0usize;
    sentences(s, lang, &mut |_| n += 1);
    n.max(1)
}

/// Call `f(end)` with the byte end of each sentence's last token (DataTrove's `span_tokenize`).
fn sentences(s: &str, lang: Lang, f: &mut impl FnMut(usize)) {
    let base = s.as_ptr() as usize;
    let mut seen_period = false;
    let mut started = false;
    let mut last_end = 0usize;
    tokenize(s, lang, &mut |tok, _| {
        let is_sent_punct = tok.chars().count() == 1 && {
            let mut b = [0u8; 4];
            let c = tok.chars().next().unwrap_or(' ');
            tables::SENT_PUNCT.contains(&&*c.encode_utf8(&mut b))
        };
        if !started {
            started = true;
        } else if seen_period && !is_sent_punct && !is_punct_token(tok) {
            f(last_end);
            seen_period = false;
        }
        if is_sent_punct {
            seen_period = true;
        }
        last_end = tok.as_ptr() as usize - base + tok.len();
    });
    if started {
        f(last_end);
    }
}

/// Text pieces as `split_into_sentences(text)` gives them (each runs to the next sentence's end).
fn sentence_pieces(s: &str, lang: Lang) -> Vec<&str> {
    let mut ends = Vec::new();
    sentences(s, lang, &mut |e| ends.push(e));
    if ends.is_empty() {
        return vec![s];
    }
    let mut out = Vec::with_capacity(ends.len());
    let mut start = 0;
    for (i, &e) in ends.iter().enumerate() {
        let end = if i + 1 == ends.len() { s.len() } else { e };
        out.push(&s[start..end]);
        start = end;
    }
    out
}

/// Remove `\[\d*]`, `[edit]` and `[citation needed]` (Python's `\d`: any decimal digit).
fn remove_citations(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('[') {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find('[') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let digits: usize = after
            .char_indices()
            .take_while(|(_, c)| c.is_numeric() && is_decimal(*c))
            .map(|(_, c)| c.len_utf8())
            .sum();
        let skip = if after[digits..].starts_with(']') {
            Some(digits + 1)
        } else if after.starts_with("edit]") {
            Some(5)
        } else if after.starts_with("citation needed]") {
            Some(16)
        } else {
            None
        };
        match skip {
            Some(k) => rest = &after[k..],
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

fn is_decimal(c: char) -> bool {
    c.is_ascii_digit()
        || (!c.is_ascii()
            && matches!(
                unicode_general_category::get_general_category(c),
                unicode_general_category::GeneralCategory::DecimalNumber
            ))
}

/// Apply C4's rules to one document, adding the line counters to `counts`.
pub fn c4(text: &str, p: &C4Params, lang: Lang, counts: &mut Counts) -> C4Result {
    let pieces: Vec<&str> = if p.split_paragraph {
        splitlines(text).collect()
    } else {
        sentence_pieces(text, lang)
    };
    let mut num_sentences = 0i64;
    let mut kept: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    for raw in pieces {
        let line = py_strip(raw);
        counts[0] += 1;
        let mut n_words = 0i64;
        let mut too_long = false;
        for w in line.split(is_space).filter(|w| !w.is_empty()) {
            n_words += 1;
            too_long |= p.max_word_length != -1 && char_len(w) as i64 > p.max_word_length;
        }
        if too_long {
            counts[1] += 1;
            continue;
        }
        let line = if p.remove_citations {
            remove_citations(line)
        } else {
            std::borrow::Cow::Borrowed(line)
        };
        if p.filter_no_terminal_punct
            && (!line.ends_with(['.', '?', '!', '"', '\'']) || line.ends_with("..."))
        {
            counts[2] += 1;
            continue;
        }
        if n_words < p.min_words_per_line {
            counts[3] += 1;
            continue;
        }
        let line_l = lower(&line);
        if p.filter_lorem_ipsum && line_l.contains("lorem ipsum") {
            return C4Result::Drop("lorem_ipsum");
        }
        if p.filter_javascript && line_l.contains("javascript") {
            counts[4] += 1;
            continue;
        }
        if p.filter_curly_bracket && line.contains('{') {
            return C4Result::Drop("curly_bracket");
        }
        if p.filter_policy && POLICY.iter().any(|s| line_l.contains(s)) {
            counts[5] += 1;
            continue;
        }
        if p.min_num_sentences != -1 {
            num_sentences += if p.split_paragraph {
                sentence_count(&line, lang) as i64
            } else {
                1
            };
        }
        kept.push(line);
        counts[6] += 1;
    }
    if num_sentences < p.min_num_sentences {
        return C4Result::Drop("too_few_sentences");
    }
    let sep = if p.split_paragraph { "\n" } else { " " };
    let joined = kept.join(sep);
    C4Result::Keep(py_strip(&joined).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_removed_as_the_regex() {
        assert_eq!(
            remove_citations("a[1] b[] c[edit] d[citation needed] e[x]"),
            "a b c d e[x]"
        );
        assert_eq!(remove_citations("[[1]]"), "[]");
    }

    #[test]
    fn sentencizer_counts() {
        assert_eq!(sentence_count("One. Two! Three?", Lang::English), 3);
        assert_eq!(sentence_count("Dr. Smith went home.", Lang::English), 1);
        assert_eq!(sentence_count("Wait... what?!", Lang::English), 1);
        assert_eq!(sentence_count("", Lang::English), 1);
    }

    #[test]
    fn lines_cleaned() {
        let text = "Title\nThis is one. This is two.\nWe use cookies on this site.\n\
                    Three is here. Four is here. Five is here.";
        let mut c = Counts::default();
        match c4(text, &C4Params::default(), Lang::English, &mut c) {
            C4Result::Keep(t) => assert_eq!(
                t,
                "This is one. This is two.\nThree is here. Four is here. Five is here."
            ),
            C4Result::Drop(r) => panic!("dropped: {r}"),
        }
        assert_eq!(c, [4, 0, 1, 0, 0, 1, 2]);
    }
}
