import random
import urllib.parse

import pyarrow as pa
import pytest
from kernel_layouts import variants

import mdf_kernels as mk

HAND_URLS = [
    "https://www.Example.COM/a?b#c",
    "http://user:pw@host.org:8080/x",
    "//cdn.example.net/lib.js",
    "http://[::1]:80/",
    "http://[fe80::1%EtH0]/",
    "http://[::ffff:1.2.3.4]/",
    "http://[1.2.3.4]/",
    "http://[v1.fe]/",
    "http://[v1]/",
    "http://[::1/",
    "http://::1]/",
    "  \thttp://a.b\n.c/",
    "HTTP://ÄÖ.de/",
    "http://ex\u2100ample.com/",
    "example.com/path",
    "www.example.com:80/x",
    "mailto:a@b.c",
    "http:///path",
    "http://:80/",
    "http://user@/",
    "1http://x.y/",
    "a+b-c.d://Host/",
    "http://a@b@c/",
    "http://host:notaport/",
    "http://host?q#f",
    "http://HOST#frag",
    "http://a[b]c/",
    "ftp://FTP.x.org",
    "",
    "\x00\x01 http://ctl.example/",
    "http://xn--nxasmq6b.com/",
    "http://例え.テスト/パス",
    "https://www.example.com.:443/",
    "javascript:alert(1)",
    "http://[fe80::1%]/",
    "http://[fe80::1%a%b]/",
    "http://[vG.x]/",
]

ALPHABET = "abcXYZ019.-_:/@[]%?#+ \tÄ€\u2100v"


def reference_host(url):
    try:
        return urllib.parse.urlsplit(url).hostname
    except ValueError:
        return None


def random_urls(n, seed=0):
    rng = random.Random(seed)
    prefixes = ["http://", "https://", "//", "", "HtTp://", "x:", "ftp://u:p@", "http://["]
    out = []
    for _ in range(n):
        body = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 25)))
        out.append(rng.choice(prefixes) + body)
    return out


def test_url_host_matches_urllib_on_hand_list(layout):
    urls = [*HAND_URLS, None]
    got = mk.url_host(variants(urls)[layout]).to_pylist()
    want = [None if u is None else reference_host(u) for u in urls]
    assert got == want


def test_url_host_matches_urllib_on_random_urls():
    urls = random_urls(20000)
    got = mk.url_host(pa.array(urls, pa.large_string())).to_pylist()
    mismatches = [(u, g, reference_host(u)) for u, g in zip(urls, got, strict=False) if g != reference_host(u)]
    assert mismatches[:10] == []


def test_url_host_type_errors():
    with pytest.raises(TypeError, match="url_host: expected"):
        mk.url_host(pa.array([1]))


def reference_blocked(host, domains):
    if host is None:
        return None
    h = host.lower().rstrip(".")
    parts = h.split(".")
    return any(".".join(parts[i:]) in domains for i in range(len(parts))) if h else False


def test_domain_blocked_matches_reference(layout):
    blocklist = ["Bad.COM.", "evil.org", "x.y.z", ""]
    ds = mk.DomainSet(blocklist)
    assert len(ds) == 3
    assert "bad.com" in ds and "BAD.com." in ds and "sub.bad.com" not in ds
    hosts = ["bad.com", "a.b.BAD.com.", "notbad.com", "com", "w.x.y.z", "y.z", "", None, "evil.org.uk"]
    canonical = {d.lower().rstrip(".") for d in blocklist if d}
    got = mk.domain_blocked(variants(hosts)[layout], ds).to_pylist()
    assert got == [reference_blocked(h, canonical) for h in hosts]


def test_domain_blocked_on_url_hosts():
    urls = ["https://ads.tracker.io/x", "https://good.site/", None, "not a url"]
    ds = mk.DomainSet(pa.array(["tracker.io", None]))
    assert mk.domain_blocked(mk.url_host(pa.array(urls)), ds).to_pylist() == [True, False, None, None]


def test_domain_set_rejects_bad_input():
    with pytest.raises(TypeError, match="DomainSet: domains must be an iterable of str, got a single str"):
        mk.DomainSet("example.com")
    with pytest.raises(TypeError, match="DomainSet: domains must contain only str"):
        mk.DomainSet(["a.com", 3])
    with pytest.raises(TypeError):
        mk.domain_blocked(pa.array(["a"]), ["a"])


def test_registered_domain():
    hosts = ["www.example.co.uk", "WWW.Example.COM.", "a.b.github.io", "co.uk", "com", "192.168.0.1", "::1", "", None]
    want = ["example.co.uk", "example.com", "b.github.io", None, None, None, None, None, None]
    assert mk.registered_domain(pa.array(hosts)).to_pylist() == want
    assert mk.registered_domain(pa.chunked_array([pa.array(hosts[:3]), pa.array(hosts[3:])])).to_pylist() == want
