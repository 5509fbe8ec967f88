"""``html_extract`` operator: synthetic pages of furniture around an article, recipe use, errors."""

from __future__ import annotations

import importlib.util

import pyarrow as pa
import pytest

from mdf.errors import MissingDependencyError, OperatorError
from mdf.testing import check_operator_contract, run_operator

HAS_KERNEL = importlib.util.find_spec("mdf_kernels") is not None and hasattr(
    importlib.import_module("mdf_kernels"), "html_extract"
)
pytestmark = pytest.mark.skipif(not HAS_KERNEL, reason="needs mdf-kernels with html_extract: pip install ./rust")

ARTICLE = [
    "The harbour authority said on Tuesday that the new ferry terminal, delayed by two years of disputes, "
    "will open in March, with six crossings a day to the islands.",
    "Fares will rise by four percent, the authority said, but residents of the islands keep their discount, "
    "and children under twelve travel free all year round.",
    "Local businesses, which lost trade while the old quay was closed, welcomed the news, though several "
    "asked for more parking near the terminal and a later last sailing in summer.",
]

FURNITURE = {
    "nav": '<nav class="site-nav"><a href="/">Home</a> <a href="/news">News</a> <a href="/travel">Travel</a></nav>',
    "cookie": '<div id="cookie-consent">This site uses cookies to personalise ads and analyse traffic. '
    "<a href=/privacy>Privacy policy</a> <button>Accept</button></div>",
    "share": '<div class="share-tools"><a href=/fb>Share on Facebook</a> <a href=/tw>Share on Twitter</a></div>',
    "related": "<aside><h3>Related stories</h3><ul><li><a href=/1>Bridge repairs finish early on the coast road"
    "</a></li><li><a href=/2>Island school gets a new roof before winter</a></li></ul></aside>",
    "comments": '<div id="comments"><h3>Comments</h3><p>Great news, about time, the old quay was a disgrace and '
    "everyone knew it, well done to all involved.</p></div>",
    "footer": "<footer><p>Contact us - Terms of use - Copyright 2026 Harbour News Ltd, all rights reserved.</p>"
    "</footer>",
    "newsletter": '<div class="newsletter-signup"><p>Sign up for our daily newsletter, with the best stories of '
    "the day straight to your inbox, every morning.</p></div>",
}
LEAKS = ["Home", "cookies", "Share on", "Related stories", "Bridge repairs", "Great news", "Copyright", "newsletter"]


def article_page(paras: list[str] = ARTICLE, title: str = "Ferry terminal to open in March") -> str:
    body = "".join(f"<p>{p}</p>" for p in paras)
    f = FURNITURE
    return (
        f'<!doctype html><html lang="en"><head><title>{title}</title><meta name="description" content="Ferries.">'
        f'<link rel="canonical" href="https://harbour.example/ferry"></head><body>{f["nav"]}{f["cookie"]}'
        f'<div id="page"><div class="article-body"><h1>{title}</h1>{f["share"]}{body}{f["related"]}</div>'
        f"{f['comments']}</div>{f['newsletter']}{f['footer']}</body></html>"
    )


def op(**params):
    from mdf_text import HtmlExtract

    return HtmlExtract(**params)


def test_article_kept_furniture_dropped():
    batch = pa.RecordBatch.from_pydict({"id": [1], "body": pa.array([article_page().encode()], pa.binary())})
    kept, rejected = run_operator(op(), batch)
    assert rejected is None or rejected.num_rows == 0
    text = kept.column("text")[0].as_py()
    assert text == "\n\n".join(ARTICLE)
    for leak in LEAKS:
        assert leak not in text
    assert kept.column("title").to_pylist() == ["Ferry terminal to open in March"]


def test_page_without_main_text_keeps_empty_text():
    pages = [
        "<html><body>" + FURNITURE["nav"] + FURNITURE["footer"] + "</body></html>",
        "<html><body><ul><li><a href=/a>One</a></li><li><a href=/b>Two</a></li></ul></body></html>",
        "",
        None,
    ]
    batch = pa.RecordBatch.from_pydict({"body": pa.array(pages, pa.string())})
    kept, _ = run_operator(op(), batch)
    assert kept.column("text").to_pylist() == ["", "", "", None]


def test_metadata_and_charset_column():
    page = article_page(title="Fähre ab März").replace("<head>", "<head><meta charset='utf-8'>")
    raw = page.encode("cp1252")  # the meta lies; the HTTP charset from the WARC header is right
    batch = pa.RecordBatch.from_pydict({"body": pa.array([raw], pa.binary()), "charset": ["windows-1252"]})
    kept, _ = run_operator(op(charset_column="charset", with_metadata=True), batch)
    row = kept.to_pylist()[0]
    assert row["title"] == "Fähre ab März"
    assert row["canonical_url"] == "https://harbour.example/ferry"
    assert row["html_lang"] == "en"
    assert row["description"] == "Ferries."
    assert row["encoding"] == "windows-1252"


def test_output_column_names_and_replacement():
    batch = pa.RecordBatch.from_pydict({"html": [article_page()], "title": ["old"]})
    kept, _ = run_operator(op(column="html", text_column="main_text"), batch)
    assert kept.schema.names == ["html", "title", "main_text"]
    assert kept.column("title").to_pylist() == ["Ferry terminal to open in March"]


def test_contract():
    batch = pa.RecordBatch.from_pydict({"id": [1, 2, 3], "body": [article_page(), None, "<p>x"]})
    check_operator_contract(op(), batch, id_column="id")


def test_bad_columns_name_the_fix():
    batch = pa.RecordBatch.from_pydict({"body": [1, 2]})
    with pytest.raises(OperatorError, match=r"column 'body' .* is int64"):
        run_operator(op(), batch)
    with pytest.raises(OperatorError, match=r"no column 'html'.*set 'column'"):
        run_operator(op(column="html"), batch)


def test_in_a_recipe(run_recipe, tmp_path):
    import pyarrow.parquet as pq

    pages = [article_page(), "<html><body>" + FURNITURE["nav"] + "</body></html>"]
    pq.write_table(
        pa.table({"id": [1, 2], "body": pa.array([p.encode() for p in pages], pa.binary())}), tmp_path / "in.parquet"
    )
    recipe = {
        "reader": {"type": "parquet", "paths": [str(tmp_path / "in.parquet")]},
        "stages": [
            {"name": "extract", "operators": [{"html_extract": {}}, {"text_length_filter": {"min_length": 100}}]}
        ],
    }
    kept, rejected, _ = run_recipe(recipe)
    assert kept.column("id").to_pylist() == [1]
    assert kept.column("text")[0].as_py() == "\n\n".join(ARTICLE)
    assert rejected.column("_reason").to_pylist() == ["text_length_filter:too_short"]


def test_missing_kernel_names_the_install(monkeypatch):
    import mdf_kernels

    monkeypatch.delattr(mdf_kernels, "html_extract")
    with pytest.raises(MissingDependencyError, match=r"pip install \./rust"):
        op()


HOSTILE = {  # built in the child process that runs them: some are tens of MB
    # ~20,000 double-quoted attributes on one tag (~250 KB): html5gum recursed once per attribute (SIGSEGV)
    "quoted_attributes": lambda: "<p " + " ".join(f'data-a{i}="v {i}"' for i in range(20_000)) + ">x</p>",
    "class_attributes": lambda: "<p " + " ".join(f'class="c{i}"' for i in range(50_000)) + ">x</p>",
    "nested_100k": lambda: "<body>" + "<div>" * 100_000 + "<p>deep text</p>",
    "huge_attribute_value": lambda: '<p class="' + "y" * (20 << 20) + '">x</p>',
    "binary_bytes": lambda: bytes((i * 7919 + (i >> 8)) % 256 for i in range(2_000_000)),
    "one_text_node_50mb": lambda: "<p>" + "word " * (10 << 20) + "</p>",
}


def test_hostile_pages_never_crash_the_process():
    """Each hostile page in a child process (a crash there is a red test, not a dead test run): exit 0 and a
    row per page. ``quoted_attributes`` and ``class_attributes`` died with SIGSEGV before html5gum was
    patched (``rust/vendor/html5gum``): seen."""
    import subprocess
    import sys

    code = (
        "import sys, pyarrow as pa, mdf_kernels as mk; sys.path.insert(0, sys.argv[1]); "
        "from test_html import HOSTILE; page = HOSTILE[sys.argv[2]](); "
        "page = page if isinstance(page, bytes) else page.encode(); "
        "out = mk.html_extract(pa.array([page] * 2, pa.binary())); "
        "assert len(out) == 2 and out.field('error').null_count == 2"
    )
    here = str(__import__("pathlib").Path(__file__).parent)
    for name in HOSTILE:
        proc = subprocess.run([sys.executable, "-c", code, here, name], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{name}: exit {proc.returncode} {proc.stderr[-500:]}"


def test_budget_is_in_bytes_deterministic_flagged_and_counted():
    """A page longer than ``max_bytes`` gives the same text every time (the old time budget gave 36.7 M or 7.0 M
    characters of one 52 MB page, by machine load), flagged in ``truncated_column`` and counted. The old
    operator had no ``max_bytes`` nor ``truncated`` (the kernel's flag never reached Python): seen."""
    long_page = article_page([*ARTICLE, *(f"Paragraph {i}: " + ARTICLE[i % 3] for i in range(2000))])
    batch = pa.RecordBatch.from_pydict({"body": [long_page, article_page()]})
    extract = op(max_bytes=20_000, truncated_column="html_truncated")
    first, _ = run_operator(extract, batch)
    again, _ = run_operator(extract, batch)
    assert first.column("text").equals(again.column("text"))
    assert first.column("html_truncated").to_pylist() == [True, False]
    assert 0 < len(first.column("text")[0].as_py()) < 20_000
    assert extract.metrics.counters["pages_truncated"] == 2  # one per call
    whole, _ = run_operator(op(), batch)
    assert len(whole.column("text")[0].as_py()) > 100_000


def test_a_kernel_error_is_one_rejected_row():
    """A page whose extraction panics (the kernel catches it and says so in ``error``) is one rejected row with
    the message; the other rows go on. The kernel here is the real one with one row's ``error`` set, as a
    panic leaves it (the Rust test ``a_panic_is_one_row_with_its_message`` covers the catching)."""
    import pyarrow.compute as pc

    extract = op()
    extract.ensure_setup()
    real = extract._kernel

    def one_panics(pages, *args, **kw):
        out = real(pages, *args, **kw)
        error = pa.array(["internal error in html_extract (please report it): boom", None], pa.string())
        fields = {f.name: out.field(f.name) for f in out.type}
        fields["error"] = error
        fields["text"] = pc.if_else(pc.is_valid(error), pa.scalar(""), fields["text"])
        return pa.StructArray.from_arrays(list(fields.values()), names=list(fields))

    extract._kernel = one_panics
    batch = pa.RecordBatch.from_pydict({"id": [1, 2], "body": [article_page(), article_page()]})
    kept, rejected = run_operator(extract, batch)
    assert kept.column("id").to_pylist() == [2]
    assert rejected.column("id").to_pylist() == [1]
    assert rejected.column("_reason").to_pylist() == ["html_extract:kernel_error"]
    assert "boom" in rejected.column("_reason_detail")[0].as_py()
    assert extract.metrics.counters["kernel_errors"] == 1


def test_favor_reaches_the_kernel_with_the_rules():
    """``blocks: rules``: the rest of an article wrapped six divs deep (too deep for Readability's sibling rule) is
    kept by ``favor: balanced`` (the default) and ``recall``, dropped by ``precision``; an unknown mode fails at
    construction. Fails when the operator does not pass ``favor`` to the kernel (precision kept the block): seen."""
    rest = " ".join(
        f"<p>{p} Officials will review the timetable again in the autumn, after the first season.</p>" for p in ARTICLE
    )
    deep = "<div>" * 6 + rest + "</div>" * 6
    body = "".join(f"<p>{p}</p>" for p in ARTICLE * 4)
    page = f'<html><body><div class="story"><div class="part">{body}</div><figure><img src=x.jpg></figure>{deep}</div>'
    batch = pa.RecordBatch.from_pydict({"body": [page]})
    texts = {
        f: run_operator(op(favor=f, blocks="rules"), batch)[0].column("text")[0].as_py()
        for f in ("precision", "balanced", "recall")
    }
    assert all(ARTICLE[0] in t for t in texts.values())
    marker = "after the first season"
    assert marker in texts["balanced"] and marker in texts["recall"]
    assert marker not in texts["precision"]
    assert run_operator(op(blocks="rules"), batch)[0].column("text")[0].as_py() == texts["balanced"]
    with pytest.raises(ValueError, match="favor"):
        op(favor="everything")


def test_favor_reaches_the_kernel_with_the_model():
    """``blocks: model`` (the default): each ``favor`` mode's text equals the kernel's own with the shipped model,
    on a page where the kernel's texts differ between modes. Seen red with the operator not passing ``favor`` to
    the kernel (recall's text was balanced's). Which page the modes split on is the model's choice
    and moves when it is retrained (a byline after the story split them until the stray-``<html>`` retraining,
    one under the headline after it), so the test takes the first of several borderline pages that splits them
    and fails only when none does (seen: the first two alone split no mode of the charset retraining)."""
    import mdf_kernels

    body = "".join(f"<p>{p}</p>" for p in ARTICLE * 2)
    byline = '<div class="byline">By Jane Miller, staff reporter</div>'
    story = '<html><body><div class="story"><h1>Ferry</h1>{}</div></body></html>'.format
    candidates = [
        story(byline + body),
        story(body + byline),
        story('<p class="date">12 March 2026</p>' + body),
        story(body + "<p><a href=/more>Read more about ferries</a></p>"),
        story(body + '<div class="author-bio">Jane Miller covers transport for the paper.</div>'),
    ]
    model = mdf_kernels.html_block_model()
    favors = ("precision", "balanced", "recall")

    def kernel(page: str, favor: str) -> str:
        return mdf_kernels.html_extract(pa.array([page]), favor=favor, model=model).field("text")[0].as_py()

    split = [p for p in candidates if len({kernel(p, f) for f in favors}) > 1]
    assert split, "the shipped model gives every candidate page one text in all modes: add a borderline page"
    batch = pa.RecordBatch.from_pydict({"body": [split[0]]})
    for favor in favors:
        text = run_operator(op(favor=favor), batch)[0].column("text")[0].as_py()
        assert text == kernel(split[0], favor), favor
        assert ARTICLE[0] in text, favor


def test_comment_threads_named_in_the_page_language_are_dropped():
    """A German page whose article sits in ``artikel-inhalt`` and whose reader comments (comma-rich prose, enough
    to outscore the article) sit in ``kommentare`` gives the article without the comments, in every favor mode.
    Fails when the class words are English only (the comments were kept): seen."""
    comments = "".join(
        f'<div class="kommentar"><p>Leser {i}: Ich finde, wie immer, dass die Stadt, der Hafen und die Reederei zu '
        "spät, zu langsam und zu wenig geplant haben, leider, und die Preise, die Parkplätze, die Zeiten.</p></div>"
        for i in range(8)
    )
    body = "".join(f"<p>{p}</p>" for p in ARTICLE * 2)
    page = (
        f'<html lang="de"><body><div class="seite"><div class="artikel-inhalt">{body}</div>'
        f'<div id="kommentare">{comments}</div></div></body></html>'
    )
    batch = pa.RecordBatch.from_pydict({"body": [page]})
    for favor in ("precision", "balanced", "recall"):
        text = run_operator(op(favor=favor), batch)[0].column("text")[0].as_py()
        assert ARTICLE[0] in text, favor
        assert "Leser 3" not in text, (favor, text)


def test_blocks_model_reaches_the_kernel():
    """``blocks: model`` (the default) extracts with the block model shipped in the kernel (the text equals the
    kernel's own ``html_extract(model=html_block_model())``), ``blocks: rules`` without it; an unknown value
    fails at construction. The page: a short article broken by ``<br><br>`` beside a sidebar box offering a
    white paper in one long, comma-rich paragraph (issue 49's failure class), where the rules keep the box
    alone and the model keeps the article. Seen red with the operator not passing ``model`` to the kernel
    (the model's text lacked the article)."""
    import mdf_kernels

    promo = (
        "Our free white paper explains, step by step, how councils, planners, engineers, cyclists, residents, "
        "shop owners, and local groups can work together, plan, fund, build, and maintain safe, green, and "
        "popular streets, with twelve case studies, checklists, templates, and interviews, in forty pages"
    )
    page = (
        f'<html><body><div class="col-a"><div class="inner"><h1>Ferry terminal</h1><div class="text">'
        f'{"<br><br>".join(ARTICLE)}</div></div></div><div class="col-b"><div class="box"><h3>Free White Paper'
        f'</h3><p>{promo}.</p><p><a href="/download">Download now</a></p></div></div></body></html>'
    )
    batch = pa.RecordBatch.from_pydict({"body": [page]})
    model = run_operator(op(blocks="model"), batch)[0].column("text")[0].as_py()
    rules = run_operator(op(blocks="rules"), batch)[0].column("text")[0].as_py()
    assert run_operator(op(), batch)[0].column("text")[0].as_py() == model
    kernel = mdf_kernels.html_extract(pa.array([page]), model=mdf_kernels.html_block_model())
    assert model == kernel.field("text")[0].as_py()
    assert rules == mdf_kernels.html_extract(pa.array([page])).field("text")[0].as_py()
    assert all(p in model for p in ARTICLE)
    assert model != rules
    with pytest.raises(ValueError, match="blocks"):
        op(blocks="tree")
