from __future__ import annotations

from urllib.parse import urlsplit

import pyarrow as pa
import pytest

from mdf.testing import check_operator_contract, run_operator
from mdf_text import UrlFilter
from mdf_text.ops.url import native_kernels, read_blocklist, url_hosts

# (url, expected outcome) written by hand: kept, or the reason it is dropped
CASES = [
    ("https://example.com/a", "keep"),
    ("https://bad.com/x", "blocked_domain"),
    ("http://BAD.COM/upper", "blocked_domain"),
    ("https://www.bad.com/sub", "blocked_domain"),
    ("https://a.b.c.bad.com:8443/deep?q=1", "blocked_domain"),
    ("https://notbad.com/", "keep"),  # suffix of the name but not a parent domain
    ("https://bad.com.evil.org/", "keep"),  # bad.com is a prefix here, not a parent
    ("https://user:pw@bad.com/", "blocked_domain"),
    ("https://bad.com./trailing-dot", "blocked_domain"),
    ("https://sub.spam.net/", "blocked_domain"),
    ("https://spam.network/", "keep"),
    ("//bad.com/scheme-relative", "blocked_domain"),
    ("https://[2001:db8::1]/v6", "keep"),
    ("https://[2001:db8::bad]/v6", "blocked_domain"),
    ("not a url", "bad_url"),
    ("https:///no-host", "bad_url"),
    ("", "bad_url"),
    (None, "bad_url"),
    ("https://example.org/casino-deals", "blocked_word"),
    ("https://example.org/CASINO", "blocked_word"),
    ("https://ok.org/", "keep"),
]

BLOCKLIST = """# test blocklist
bad.com
  *.spam.net   # wildcard form and a comment
2001:db8::bad

"""


ENGINES = ["arrow", pytest.param("native", marks=pytest.mark.skipif(native_kernels() is None, reason="needs ./rust"))]


@pytest.fixture(params=ENGINES)
def op(tmp_path, request):
    path = tmp_path / "block.txt"
    path.write_text(BLOCKLIST)
    return UrlFilter(blocklist=str(path), block_words=["casino"], engine=request.param)


def test_blocklist_file_parsing(tmp_path):
    path = tmp_path / "b.txt"
    path.write_text(BLOCKLIST)
    assert read_blocklist(path) == ["bad.com", "spam.net", "2001:db8::bad"]


def test_hand_written_cases(op):
    urls = [u for u, _ in CASES]
    batch = pa.RecordBatch.from_pydict({"id": list(range(len(urls))), "url": pa.array(urls, pa.string())})
    kept, rejected = run_operator(op, batch)
    expected_kept = [i for i, (_, want) in enumerate(CASES) if want == "keep"]
    assert kept.column("id").to_pylist() == expected_kept
    got = dict(zip(rejected.column("id").to_pylist(), rejected.column("_reason").to_pylist(), strict=True))
    want = {i: f"url_filter:{w}" for i, (_, w) in enumerate(CASES) if w != "keep"}
    assert got == want


def test_hosts_agree_with_urllib():
    urls = [
        "https://Example.COM/x",
        "http://user@host.org:80/p",
        "https://a.b.co.uk/?q=http://evil.com",
        "https://host.org#frag",
        "https://host.org?q",
        "ftp://files.example.net/pub",
        "https://[::1]:8080/",
        "http://xn--bcher-kva.example/",
        "https://host.org:99999/",
    ]
    got = url_hosts(pa.array(urls)).to_pylist()
    assert got == [urlsplit(u).hostname for u in urls]


def test_inline_domains_and_words_only():
    op = UrlFilter(domains=["Example.COM"])
    batch = pa.RecordBatch.from_pydict({"url": ["https://www.example.com/", "https://example.net/"]})
    kept, _ = run_operator(op, batch)
    assert kept.column("url").to_pylist() == ["https://example.net/"]


def test_needs_something_to_block():
    with pytest.raises(Exception, match="give blocklist, domains or block_words"):
        UrlFilter()


def test_contract(op):
    batch = pa.RecordBatch.from_pydict({"id": [1, 2, 3], "url": ["https://bad.com/", "https://ok.org/", None]})
    check_operator_contract(op, batch, id_column="id")


def test_engines_agree_on_generated_crawl_urls():
    from mdf.demo_data import BLOCKED_DOMAINS, DemoSpec, make_table

    table = make_table(DemoSpec(rows=5000, seed=3))
    batch = table.to_batches()[0]
    if native_kernels() is None:
        pytest.skip("needs ./rust")
    results = [run_operator(UrlFilter(domains=list(BLOCKED_DOMAINS), engine=e), batch) for e in ("arrow", "native")]
    assert results[0][0].column("id").equals(results[1][0].column("id"))
    assert results[0][1].column("_reason").equals(results[1][1].column("_reason"))
