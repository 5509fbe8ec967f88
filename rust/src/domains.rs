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

    proptest! {
        #![proptest_config(crate::fuzz_cases(300))]
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
