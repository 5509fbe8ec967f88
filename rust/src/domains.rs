//! Domain block lists (`DomainSet`, `domain_blocked`) and registrable domains from the
//! public suffix list compiled into the `psl` crate (ICANN and private sections).

use std::borrow::Cow;
use std::collections::HashSet;
use std::net::Ipv4Addr;

use std::hash::{BuildHasher, Hasher};

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::columns::BytesColumn;

/// Lowercase a host and drop trailing dots (`"Example.COM."` -> `"example.com"`).
pub fn canonical_host(host: &str) -> Cow<'_, str> {
    let host = host.trim_end_matches('.');
    if host.is_ascii() {
        if host.bytes().any(|c| c.is_ascii_uppercase()) {
            Cow::Owned(host.to_ascii_lowercase())
        } else {
            Cow::Borrowed(host)
        }
    } else {
        Cow::Owned(host.to_lowercase())
    }
}

/// One-shot xxh3 of the bytes `str`'s `Hash` writes (the streaming hasher is several times
/// slower on short keys like domain names).
#[derive(Debug, Clone, Copy, Default)]
pub struct FastStrHasher(u64);

impl Hasher for FastStrHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxh3_64_with_seed(bytes, self.0);
    }
    fn write_u8(&mut self, i: u8) {
        self.0 = (self.0 ^ u64::from(i)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct FastStrState;

impl BuildHasher for FastStrState {
    type Hasher = FastStrHasher;
    fn build_hasher(&self) -> FastStrHasher {
        FastStrHasher(0)
    }
}

/// A set of domains; a host is blocked when it or any parent domain is in the set.
#[derive(Debug, Clone, Default)]
pub struct DomainSet {
    domains: HashSet<Box<str>, FastStrState>,
}

impl DomainSet {
    /// Build from domains; they are lowercased, trailing dots stripped, empty ones skipped.
    pub fn new<S: AsRef<str>>(domains: impl IntoIterator<Item = S>) -> Self {
        let mut set = HashSet::with_hasher(FastStrState);
        for d in domains {
            let d = canonical_host(d.as_ref().trim());
            if !d.is_empty() {
                set.insert(d.into_owned().into_boxed_str());
            }
        }
        Self { domains: set }
    }

    pub fn len(&self) -> usize {
        self.domains.len()
    }

    pub fn is_empty(&self) -> bool {
        self.domains.is_empty()
    }

    pub fn contains_exact(&self, domain: &str) -> bool {
        self.domains.contains(domain)
    }

    /// True when `host` (canonicalised) or one of its parent domains is in the set.
    pub fn blocks(&self, host: &str) -> bool {
        let host = canonical_host(host);
        let mut rest: &str = &host;
        while !rest.is_empty() {
            if self.domains.contains(rest) {
                return true;
            }
            match rest.find('.') {
                Some(i) => rest = &rest[i + 1..],
                None => break,
            }
        }
        false
    }

    /// `blocks` for a host column; invalid UTF-8 is never blocked; null stays null (`None`).
    pub fn blocks_column(&self, hosts: &BytesColumn) -> Vec<bool> {
        hosts.par_map(
            || (),
            |_, v| {
                v.and_then(|b| std::str::from_utf8(b).ok())
                    .is_some_and(|h| self.blocks(h))
            },
        )
    }
}

/// [`url_verdict`]: the URL's host is kept.
pub const URL_KEEP: u8 = 0;
/// [`url_verdict`]: no host, or one no host has (`url_filter`'s `bad_url`).
pub const URL_BAD: u8 = 1;
/// [`url_verdict`]: the host or a parent domain is in the set (`url_filter`'s `blocked_domain`).
pub const URL_BLOCKED: u8 = 2;

/// Bytes no host has: what `url_filter`'s arrow engine matches with RE2's `[\s<>"{}|\\^`%]`
/// (RE2's `\s` is tab, LF, FF, CR and space; not VT). Hosts are lowercased ASCII or UTF-8
/// whose multi-byte sequences never hold an ASCII byte, so a byte test is a character test.
const fn bad_host_bytes() -> [bool; 256] {
    let mut t = [false; 256];
    let bad = b"\t\n\x0c\r <>\"{}|\\^`%";
    let mut i = 0;
    while i < bad.len() {
        t[bad[i] as usize] = true;
        i += 1;
    }
    t
}
const BAD_HOST: [bool; 256] = bad_host_bytes();

/// What `url_filter` decides for one URL, in one pass and without building a host column: the
/// host is `urlsplit(url).hostname` ([`crate::url::url_host`]) less its trailing dots; none, an
/// empty one or one with a [`BAD_HOST`] byte is [`URL_BAD`]; one that `set` blocks (itself or a
/// parent domain) is [`URL_BLOCKED`]; else [`URL_KEEP`]. Equal, row for row, to the arrow
/// engine's `clean_hosts(url_host(urls))` followed by `domain_blocked`. A null URL or one that
/// is not UTF-8 has no host.
pub fn url_verdict(url: Option<&[u8]>, set: &DomainSet) -> u8 {
    let Some(host) = url
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(crate::url::url_host)
    else {
        return URL_BAD;
    };
    let host = host.trim_end_matches('.');
    if host.is_empty() || host.bytes().any(|b| BAD_HOST[usize::from(b)]) {
        URL_BAD
    } else if set.blocks(host) {
        URL_BLOCKED
    } else {
        URL_KEEP
    }
}

/// [`url_verdict`] of every row of a URL column.
pub fn url_verdict_column(urls: &BytesColumn, set: &DomainSet) -> Vec<u8> {
    urls.par_map(|| (), |_, v| url_verdict(v, set))
}

/// Registrable domain ("eTLD+1") of a host, `None` for IP addresses, public suffixes
/// themselves and hosts without a dot-separated suffix.
pub fn registered_domain(host: &str) -> Option<Cow<'_, str>> {
    let canon = canonical_host(host);
    if canon.is_empty() || canon.contains([':', '[', ']']) || canon.parse::<Ipv4Addr>().is_ok() {
        return None;
    }
    match canon {
        Cow::Borrowed(h) => psl::domain_str(h).map(Cow::Borrowed),
        Cow::Owned(h) => psl::domain_str(&h).map(|d| Cow::Owned(d.to_owned())),
    }
}

pub fn registered_domain_column(hosts: &BytesColumn) -> Vec<Option<Cow<'_, str>>> {
    hosts.par_map(
        || (),
        |_, v| {
            v.and_then(|b| std::str::from_utf8(b).ok())
                .and_then(registered_domain)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn blocks_host_and_parents() {
        let s = DomainSet::new(["Bad.COM.", "evil.org", "", "x.y.z"]);
        assert_eq!(s.len(), 3);
        assert!(s.blocks("bad.com"));
        assert!(s.blocks("a.b.BAD.com."));
        assert!(!s.blocks("notbad.com"));
        assert!(!s.blocks("com"));
        assert!(s.blocks("w.x.y.z"));
        assert!(!s.blocks("y.z"));
        assert!(!s.blocks(""));
        assert!(!s.blocks("."));
    }

    #[test]
    fn registered_domains() {
        let rd = |h: &str| registered_domain(h).map(Cow::into_owned);
        assert_eq!(rd("www.example.co.uk").as_deref(), Some("example.co.uk"));
        assert_eq!(rd("WWW.Example.COM.").as_deref(), Some("example.com"));
        assert_eq!(rd("a.b.github.io").as_deref(), Some("b.github.io"));
        assert_eq!(rd("co.uk"), None);
        assert_eq!(rd("com"), None);
        assert_eq!(rd("192.168.0.1"), None);
        assert_eq!(rd("::1"), None);
        assert_eq!(rd(""), None);
    }

    /// The arrow engine's steps, one by one: host, trailing dots, bad host, blocklist walk.
    fn verdict_by_steps(url: &str, set: &DomainSet) -> u8 {
        let Some(host) = crate::url::url_host(url) else {
            return URL_BAD;
        };
        let host = host.trim_end_matches('.');
        let bad = |c: char| "\t\n\x0c\r <>\"{}|\\^`%".contains(c);
        if host.is_empty() || host.contains(bad) {
            URL_BAD
        } else {
            u8::from(set.blocks(host)) * URL_BLOCKED
        }
    }

    #[test]
    fn url_verdicts() {
        let s = DomainSet::new(["bad.com", "2001:db8::bad"]);
        let v = |u: &str| url_verdict(Some(u.as_bytes()), &s);
        assert_eq!(v("https://www.BAD.com./x"), URL_BLOCKED);
        assert_eq!(v("https://notbad.com/"), URL_KEEP);
        assert_eq!(v("https://[2001:db8::bad]/"), URL_BLOCKED);
        assert_eq!(v("https://..../"), URL_BAD);
        assert_eq!(v("https://a b.com/"), URL_BAD);
        assert_eq!(v("https://a\x0bb.com/"), URL_KEEP); // VT is not RE2's \s
        assert_eq!(v("https://[fe80::1%25eth0]/"), URL_BAD); // '%' (a zone id)
        assert_eq!(v("not a url"), URL_BAD);
        assert_eq!(url_verdict(None, &s), URL_BAD);
        assert_eq!(url_verdict(Some(b"https://\xff.com/"), &s), URL_BAD);
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(300))]
        #[test]
        fn url_verdict_is_the_steps(
            scheme in "(https?:)?//",
            user in "([a-z]{1,3}@)?",
            host in "[a-zA-Z0-9.\\-\\[\\]: %<>\"\\x0b\t]{0,16}",
            rest in "(:[0-9]{0,3})?(/[a-z]*)?",
            blocked in "[a-z.]{0,8}",
        ) {
            let s = DomainSet::new([blocked.as_str(), "a.b"]);
            let url = format!("{scheme}{user}{host}{rest}");
            prop_assert_eq!(url_verdict(Some(url.as_bytes()), &s), verdict_by_steps(&url, &s));
        }

        #[test]
        fn fuzz_never_panics(h in any::<String>(), d in "[a-z.]{0,12}") {
            let s = DomainSet::new([d.as_str()]);
            let _ = s.blocks(&h);
            let _ = registered_domain(&h);
            if !d.trim_matches('.').is_empty() && !d.contains("..") && !d.starts_with('.') {
                let host = format!("sub.{}", d);
                prop_assert!(s.blocks(&host));
            }
        }
    }
}
