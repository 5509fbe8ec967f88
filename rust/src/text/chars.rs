//! Character predicates with Python's meaning (`str.isspace`, `str.isalpha`, `str.splitlines`, `len`), so
//! statistics computed here equal the ones DataTrove computes on Python strings.

use unicode_general_category::{get_general_category, GeneralCategory as G};

use super::tables;

/// Membership in a sorted table of inclusive code-point ranges.
#[inline]
pub fn in_ranges(table: &[(char, char)], c: char) -> bool {
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Python's `str.isspace`: Unicode White_Space plus the four ASCII separators 0x1C..0x1F.
#[inline]
pub fn is_space(c: char) -> bool {
    if c.is_ascii() {
        matches!(
            c,
            ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r' | '\x1c'..='\x1f'
        )
    } else {
        c.is_whitespace()
    }
}

/// Python's `str.isalpha` for one character: general category L*.
#[inline]
pub fn is_alpha(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
    )
}

/// spaCy's `is_punct`: every character has general category P*.
pub fn is_punct_token(s: &str) -> bool {
    s.chars().all(|c| {
        matches!(
            get_general_category(c),
            G::ConnectorPunctuation
                | G::DashPunctuation
                | G::OpenPunctuation
                | G::ClosePunctuation
                | G::InitialPunctuation
                | G::FinalPunctuation
                | G::OtherPunctuation
        )
    })
}

/// DataTrove's `PUNCTUATION_SET` (ASCII and CJK punctuation, control characters, terminal punctuation).
#[inline]
pub fn is_dt_punct(c: char) -> bool {
    in_ranges(tables::DT_PUNCTUATION, c)
}

/// DataTrove's `TERMINAL_PUNCTUATION`.
#[inline]
pub fn is_dt_terminal(c: char) -> bool {
    in_ranges(tables::DT_TERMINAL, c)
}

/// Python's `len` of a str: code points.
#[inline]
pub fn char_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// Python's `str.strip()`.
#[inline]
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `str.splitlines()` (no line ends kept): breaks on \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85,
/// U+2028 and U+2029; no empty last line after a final break.
pub fn splitlines(s: &str) -> SplitLines<'_> {
    SplitLines { rest: s }
}

pub struct SplitLines<'a> {
    rest: &'a str,
}

impl<'a> Iterator for SplitLines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let s = self.rest;
        for (i, c) in s.char_indices() {
            let brk = matches!(
                c,
                '\n' | '\r'
                    | '\x0b'
                    | '\x0c'
                    | '\x1c'
                    | '\x1d'
                    | '\x1e'
                    | '\u{85}'
                    | '\u{2028}'
                    | '\u{2029}'
            );
            if brk {
                let mut end = i + c.len_utf8();
                if c == '\r' && s.as_bytes().get(end) == Some(&b'\n') {
                    end += 1;
                }
                self.rest = &s[end..];
                return Some(&s[..i]);
            }
        }
        self.rest = "";
        Some(s)
    }
}

/// Python's `str.count(sub)`: non-overlapping occurrences, left to right.
pub fn count_sub(s: &str, sub: &str) -> usize {
    if sub.is_empty() {
        return char_len(s) + 1;
    }
    s.matches(sub).count()
}

/// Python's `str.lower()` (full case mapping), borrowing when already lower-case ASCII.
pub fn lower(s: &str) -> std::borrow::Cow<'_, str> {
    if s.is_ascii() {
        if s.bytes().any(|b| b.is_ascii_uppercase()) {
            return std::borrow::Cow::Owned(s.to_ascii_lowercase());
        }
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(s.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitlines_matches_python() {
        let v: Vec<_> = splitlines("a\r\nb\rc\n\nd\u{2028}e\n").collect();
        assert_eq!(v, ["a", "b", "c", "", "d", "e"]);
        assert_eq!(splitlines("").count(), 0);
        assert_eq!(splitlines("\n").collect::<Vec<_>>(), [""]);
    }

    #[test]
    fn python_predicates() {
        assert!(is_space('\x1c') && is_space('\u{a0}') && !is_space('\u{200b}'));
        assert!(is_alpha('é') && is_alpha('中') && !is_alpha('1') && !is_alpha('\u{301}'));
        assert!(is_dt_punct('#') && is_dt_punct('\x01') && is_dt_punct('。') && !is_dt_punct('a'));
        assert!(is_dt_terminal('.') && is_dt_terminal('？') && !is_dt_terminal(','));
        assert_eq!(count_sub(".....", "..."), 1);
        assert_eq!(py_strip("\x1c a \u{3000}"), "a");
    }
}
