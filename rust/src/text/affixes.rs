//! spaCy 3.8's English affix rules as code: the prefix, suffix and infix regexes of `blank("en")` (their
//! alternatives in order, lookbehinds and lookaheads as checks on the neighbouring characters) and the URL
//! matcher, over the character classes of `tables.rs`.

use super::chars::{in_ranges, is_space};
use super::tables as t;

fn is_single(list: &[&str], c: char) -> bool {
    let mut buf = [0u8; 4];
    let cs: &str = c.encode_utf8(&mut buf);
    list.contains(&cs)
}

fn dot_run(s: &str) -> usize {
    s.bytes().take_while(|&b| b == b'.').count()
}

/// Bytes of the prefix spaCy's prefix regex matches at the start of `s` (0 = none).
pub(super) fn find_prefix(s: &str) -> usize {
    let mut it = s.chars();
    let Some(c) = it.next() else { return 0 };
    if c.is_ascii_alphanumeric() && !matches!(c, 'U' | 'C' | 'A') {
        return 0; // no prefix starts with a letter or digit, except the currencies US$, C$, A$
    }
    let cl = c.len_utf8();
    match c {
        '§' | '%' | '=' | '—' | '–' => return cl,
        '+' => {
            return if it.next().is_some_and(|n| n.is_ascii_digit()) {
                0
            } else {
                1
            }
        }
        '.' => {
            let n = dot_run(s);
            return if n >= 2 { n } else { 0 };
        }
        _ => {}
    }
    if is_single(t::PUNCT, c) || is_single(t::QUOTE_LIST, c) || in_ranges(t::ICONS, c) {
        return cl;
    }
    for cur in t::CURRENCY {
        if s.starts_with(cur) {
            return cur.len();
        }
    }
    0
}

/// Bytes of the suffix spaCy's suffix regex finds (`re.search`: the leftmost start, so the longest match).
pub(super) fn find_suffix(s: &str) -> usize {
    let Some(last) = s.chars().next_back() else {
        return 0;
    };
    let cl = last.len_utf8();
    let mut best = 0;
    let before = |n: usize| s[..s.len() - n].chars().next_back();
    let before2 = |n: usize| {
        let mut r = s[..s.len() - n].chars().rev();
        (r.next(), r.next())
    };
    if is_single(t::PUNCT, last) || is_single(t::QUOTE_LIST, last) || in_ranges(t::ICONS, last) {
        best = cl;
    }
    if matches!(last, '—' | '–') {
        best = best.max(cl);
    }
    if s.ends_with("……") {
        best = best.max("……".len());
    }
    let dots = s.bytes().rev().take_while(|&b| b == b'.').count();
    if dots >= 2 {
        best = best.max(dots);
    }
    for e in ["'s", "'S", "’s", "’S"] {
        if s.ends_with(e) {
            best = best.max(e.len());
        }
    }
    let digit_before = |n: usize| before(n).is_some_and(|c| c.is_ascii_digit());
    if last == '+' && digit_before(1) {
        best = best.max(1);
    }
    if last == '.' {
        let (p1, p2) = before2(1);
        if p2 == Some('°') && matches!(p1, Some('F' | 'f' | 'C' | 'c' | 'K' | 'k')) {
            best = best.max(1);
        }
        if p1.is_some_and(|c| in_ranges(t::DOT_SUFFIX_AFTER, c)) {
            best = best.max(1);
        }
        if p1.is_some_and(|c| in_ranges(t::ALPHA_UPPER, c))
            && p2.is_some_and(|c| in_ranges(t::ALPHA_UPPER, c))
        {
            best = best.max(1);
        }
    }
    if !s.bytes().any(|b| b.is_ascii_digit()) {
        return best; // currencies and units are suffixes only after a digit
    }
    for list in [t::CURRENCY, t::UNITS] {
        for u in list {
            if u.len() > best && s.len() > u.len() && s.ends_with(u) && digit_before(u.len()) {
                best = u.len();
            }
        }
    }
    best
}

#[inline]
fn alpha(c: Option<char>) -> bool {
    c.is_some_and(|c| in_ranges(t::ALPHA, c))
}

/// Length in bytes of the infix match at byte `p` of `s` (0 = none), alternatives in spaCy's order.
pub(super) fn infix_at(s: &str, p: usize, prev: Option<char>) -> usize {
    let rest = &s[p..];
    let Some(c) = rest.chars().next() else {
        return 0;
    };
    let cl = c.len_utf8();
    let next = rest[cl..].chars().next();
    if c == '.' {
        let n = dot_run(rest);
        if n >= 2 {
            return n;
        }
    }
    if c == '…' || in_ranges(t::ICONS, c) {
        return cl;
    }
    if matches!(c, '+' | '-' | '*' | '^')
        && prev.is_some_and(|p| p.is_ascii_digit())
        && next.is_some_and(|n| n.is_ascii_digit() || n == '-')
    {
        return cl;
    }
    if c == '.'
        && prev.is_some_and(|p| in_ranges(t::ALPHA_LOWER, p) || in_ranges(t::QUOTES, p))
        && next.is_some_and(|n| in_ranges(t::ALPHA_UPPER, n) || in_ranges(t::QUOTES, n))
    {
        return cl;
    }
    if c == ',' && alpha(prev) && alpha(next) {
        return cl;
    }
    if alpha(prev) || prev.is_some_and(|p| p.is_ascii_digit()) {
        for h in ["-", "–", "—", "--", "---", "——", "~"] {
            if rest.starts_with(h) && alpha(rest[h.len()..].chars().next()) {
                return h.len();
            }
        }
    }
    if matches!(c, ':' | '<' | '>' | '=' | '/')
        && (alpha(prev) || prev.is_some_and(|p| p.is_ascii_digit()))
        && alpha(next)
    {
        return cl;
    }
    0
}

fn url_label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || ('\u{a1}'..='\u{ffff}').contains(&c)
}

/// spaCy's `URL_MATCH` (tokenizer_exceptions.URL_PATTERN) for domain names; the IPv4 branch is read as
/// "four dotted numbers", which only matters for addresses followed by a port or path.
pub(super) fn url_match(s: &str) -> bool {
    let mut rest = s;
    if let Some(i) = rest.find("://") {
        let scheme = &rest[..i];
        if scheme.chars().count() >= 2
            && scheme
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '+' | '-' | '.'))
        {
            rest = &rest[i + 3..];
        }
    }
    // user info: the regex backtracks over every '@', longest first, then none
    let ats: Vec<usize> = rest.match_indices('@').map(|(i, _)| i).collect();
    for &a in ats.iter().rev() {
        if a > 0 && host_port_path(&rest[a + 1..]) {
            return true;
        }
    }
    host_port_path(rest)
}

fn host_port_path(s: &str) -> bool {
    let end = s
        .find(|c: char| !(url_label_char(c) || c == '.' || c == '_' || c == '-'))
        .unwrap_or(s.len());
    let (host, tail) = s.split_at(end);
    if !(host_ok(host) || ipv4_ok(host)) {
        return false;
    }
    let mut tail = tail;
    if let Some(port) = tail.strip_prefix(':') {
        let d = port.bytes().take_while(u8::is_ascii_digit).count();
        if !(2..=5).contains(&d) {
            return false;
        }
        tail = &port[d..];
    }
    tail.is_empty() || (tail.starts_with(['/', '?', '#']) && !tail.contains(is_space))
}

fn host_ok(host: &str) -> bool {
    let Some((labels, tld)) = host.rsplit_once('.') else {
        return false;
    };
    let n = tld.chars().count();
    if !(2..=63).contains(&n) || !tld.chars().all(|c| in_ranges(t::ALPHA_LOWER, c)) {
        return false;
    }
    !labels.is_empty()
        && labels.split('.').all(|l| {
            let n = l.chars().count();
            let ok_end = |c: Option<char>| c.is_some_and(url_label_char);
            (1..=64).contains(&n) && ok_end(l.chars().next()) && ok_end(l.chars().next_back())
        })
}

fn ipv4_ok(host: &str) -> bool {
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
}
