//! URL host extraction that reproduces `urllib.parse.urlsplit(url).hostname` (CPython 3.11+)
//! without building the full split result. Where `urlsplit` raises `ValueError` (bad brackets,
//! invalid bracketed IP, NFKC-unsafe netloc) the host is `None`.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

use unicode_normalization::UnicodeNormalization;

use crate::columns::BytesColumn;

fn is_scheme_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')
}

/// `urlsplit(url).hostname`, or `None` where it is `None` or `urlsplit` raises.
pub fn url_host(url: &str) -> Option<Cow<'_, str>> {
    // urlsplit: lstrip C0 controls and space, then drop every tab/CR/LF.
    let url = url.trim_start_matches(|c: char| c <= ' ');
    if url.bytes().any(|b| matches!(b, b'\t' | b'\r' | b'\n')) {
        let cleaned = url.replace(['\t', '\r', '\n'], "");
        return host_in(&cleaned).map(|h| Cow::Owned(h.into_owned()));
    }
    host_in(url)
}

fn host_in(url: &str) -> Option<Cow<'_, str>> {
    let netloc = netloc_of(url)?;
    if let Some(host) = plain_host(netloc) {
        return (!host.is_empty()).then_some(Cow::Borrowed(host));
    }
    host_of_netloc(netloc).map(lower_host)
}

/// Fast path for the common netloc (ASCII, no brackets, no `%`, already lowercase): the host
/// in one scan. `None` means "take the general path".
fn plain_host(netloc: &str) -> Option<&str> {
    let b = netloc.as_bytes();
    let (mut start, mut colon) = (0, None);
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'@' => (start, colon) = (i + 1, None),
            b':' if colon.is_none() => colon = Some(i),
            b'[' | b']' | b'%' | b'A'..=b'Z' | 0x80.. => return None,
            _ => {}
        }
    }
    Some(&netloc[start..colon.unwrap_or(b.len())])
}

/// The netloc component, checked the way `urlsplit` checks it. All delimiters are ASCII,
/// so byte positions are char boundaries.
fn netloc_of(url: &str) -> Option<&str> {
    let b = url.as_bytes();
    // A scheme is the prefix before the first ':' if it starts with a letter and has only
    // scheme characters; the first non-scheme byte decides.
    let mut start = 0;
    if b.first().is_some_and(u8::is_ascii_alphabetic) {
        if let Some(i) = b.iter().position(|&c| !is_scheme_char(c)) {
            if b[i] == b':' {
                start = i + 1;
            }
        }
    }
    if !b[start..].starts_with(b"//") {
        return None;
    }
    let after = &url[start + 2..];
    let (mut end, mut open, mut close, mut non_ascii) = (after.len(), false, false, false);
    for (i, &c) in after.as_bytes().iter().enumerate() {
        match c {
            b'/' | b'?' | b'#' => {
                end = i;
                break;
            }
            b'[' => open = true,
            b']' => close = true,
            0x80.. => non_ascii = true,
            _ => {}
        }
    }
    let netloc = &after[..end];
    if open != close {
        return None;
    }
    if open {
        let bracketed = netloc.split_once('[').map_or("", |(_, r)| r);
        let bracketed = bracketed.split_once(']').map_or(bracketed, |(h, _)| h);
        if !valid_bracketed_host(bracketed) {
            return None;
        }
    }
    if non_ascii && !nfkc_safe(netloc) {
        return None;
    }
    Some(netloc)
}

/// `_check_bracketed_host`: IPvFuture (`v<hex>.<anything>`) or an IPv6 address (scope allowed).
fn valid_bracketed_host(h: &str) -> bool {
    if let Some(rest) = h.strip_prefix('v') {
        let hex_len = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
        return hex_len > 0 && rest.len() > hex_len + 1 && rest.as_bytes()[hex_len] == b'.';
    }
    // ipaddress.ip_address accepts IPv4 too, but urlsplit rejects IPv4 inside brackets.
    let (addr, scope) = match h.split_once('%') {
        Some((a, s)) => (a, Some(s)),
        None => (h, None),
    };
    if scope.is_some_and(|s| s.is_empty() || s.contains('%')) {
        return false;
    }
    addr.parse::<Ipv6Addr>().is_ok() && h.parse::<Ipv4Addr>().is_err()
}

/// `_checknetloc`: reject netlocs whose NFKC form introduces URL delimiters.
fn nfkc_safe(netloc: &str) -> bool {
    let n: String = netloc
        .chars()
        .filter(|c| !matches!(c, '@' | ':' | '#' | '?'))
        .collect();
    let n2: String = n.nfkc().collect();
    n == n2 || !n2.contains(['/', '?', '#', '@', ':'])
}

/// `SplitResult._hostinfo[0]`: strip userinfo and port, unwrap brackets.
fn host_of_netloc(netloc: &str) -> Option<&str> {
    let hostinfo = netloc.rsplit_once('@').map_or(netloc, |(_, h)| h);
    let host = match hostinfo.split_once('[') {
        Some((_, br)) => br.split_once(']').map_or(br, |(h, _)| h),
        None => hostinfo.split_once(':').map_or(hostinfo, |(h, _)| h),
    };
    (!host.is_empty()).then_some(host)
}

/// `hostname.lower()` except an IPv6 zone id after `%`, which keeps its case.
fn lower_host(host: &str) -> Cow<'_, str> {
    let (name, zone) = match host.find('%') {
        Some(i) => host.split_at(i),
        None => (host, ""),
    };
    if name.is_ascii() && !name.bytes().any(|c| c.is_ascii_uppercase()) {
        return Cow::Borrowed(host);
    }
    let mut s = if name.is_ascii() {
        name.to_ascii_lowercase()
    } else {
        name.to_lowercase()
    };
    s.push_str(zone);
    Cow::Owned(s)
}

/// Hosts of a URL column; invalid UTF-8 rows give `None`.
pub fn url_host_column(col: &BytesColumn) -> Vec<Option<Cow<'_, str>>> {
    col.par_map(
        || (),
        |_, v| {
            v.and_then(|b| std::str::from_utf8(b).ok())
                .and_then(url_host)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(u: &str) -> Option<String> {
        url_host(u).map(Cow::into_owned)
    }

    #[test]
    fn common_urls() {
        assert_eq!(
            h("https://www.Example.COM/a?b#c").as_deref(),
            Some("www.example.com")
        );
        assert_eq!(
            h("http://user:pw@host.org:8080/x").as_deref(),
            Some("host.org")
        );
        assert_eq!(
            h("//cdn.example.net/lib.js").as_deref(),
            Some("cdn.example.net")
        );
        assert_eq!(h("http://[::1]:80/").as_deref(), Some("::1"));
        assert_eq!(h("http://[fe80::1%EtH0]/").as_deref(), Some("fe80::1%EtH0"));
        assert_eq!(h("  \thttp://a.b\n.c/").as_deref(), Some("a.b.c"));
        assert_eq!(h("HTTP://ÄÖ.de/").as_deref(), Some("äö.de"));
        assert_eq!(h("http://[v1.fe]/").as_deref(), Some("v1.fe"));
    }

    #[test]
    fn no_host() {
        for u in [
            "",
            "example.com/path",
            "www.example.com:80/x",
            "mailto:a@b.c",
            "http:///path",
            "http://[::1/",
            "http://::1]/",
            "http://[1.2.3.4]/",
            "http://[nothex]/",
            "http://[v1]/",
            "http://:80/",
            "http://user@/",
            "1http://x.y/",
        ] {
            assert_eq!(h(u), None, "{u:?}");
        }
    }

    #[test]
    fn odd_but_valid() {
        // No scheme but a network-path reference; scheme chars then ':' then '//'.
        assert_eq!(h("a+b-c.d://Host/").as_deref(), Some("host"));
        assert_eq!(h("http://a@b@c/").as_deref(), Some("c"));
        assert_eq!(h("http://host:notaport/").as_deref(), Some("host"));
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(500))]
        #[test]
        fn fuzz_never_panics(s in any::<String>(), t in "[a-zA-Z0-9:/@\\[\\]%.?#_-]{0,40}") {
            let _ = url_host(&s);
            let _ = url_host(&t);
            let _ = url_host(&format!("http://{t}"));
        }
    }
}
