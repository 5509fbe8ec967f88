"""The three labelled page sets, read in place from ``../shared/data``, as one list of :class:`Page`.

* ``trafeval``: 506 pages of trafilatura's evaluation corpus (``trafeval-dev``), each with up to 6 snippets of
  main text (``with``) and up to 6 of boilerplate (``without``), scored as trafilatura scores its corpus.
* ``aeb``: the 181 pages of the article-extraction benchmark, gold = ``articleBody``.
* ``readability``: Mozilla Readability's 130 test pages, gold = the text of its ``expected.html``.

Every page carries its registered domain (the site: cross-validation folds group by it, so no model is trained
and scored on pages of one site), a language (lid.176 on the gold text, so a page is filed under the language
of its article, not of its menus) and a kind (what the page declares itself to be, for the breakdown only:
no extractor sees it).
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
TRAFEVAL = DATA / "trafeval-dev" / "tests"
AEB = DATA / "aeb"
READABILITY = DATA / "readability-pages"
SETS = ("trafeval", "aeb", "readability")


@dataclass
class Page:
    set: str
    id: str
    raw: bytes
    domain: str = ""
    lang: str = ""
    kind: str = ""
    markup: str = ""
    gold: str = ""  # aeb, readability: the reference text
    with_: list[str] = field(default_factory=list)  # trafeval: snippets of main text
    without: list[str] = field(default_factory=list)  # trafeval: snippets of boilerplate

    @property
    def key(self) -> str:
        return f"{self.set}:{self.id}"


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_text(html: str) -> str:
    """Text content of a fragment (Readability's expected output has no script or style)."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return " ".join(parser.parts)


def _host(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host == "web.archive.org":  # /web/<timestamp>/<original url>
        inner = re.sub(r"^/web/[^/]+/", "", parts.path)
        return _host(inner if "://" in inner else "http://" + inner)
    return host


def _hard_host(name: str) -> str:
    """``hard::100noticias.com-millones.html`` / ``hard::zeit.de.zugverkehr.html``: the site before the slug."""
    m = re.match(r"([a-z0-9.-]+?\.(?:com|net|org|de|cu|hn|vc))[-.]", name)
    return m.group(1) if m else name


def registered_domains(hosts: list[str]) -> list[str]:
    import pyarrow as pa

    import mdf_kernels

    return [d or h for d, h in zip(mdf_kernels.registered_domain(pa.array(hosts)).to_pylist(), hosts, strict=True)]


_TYPES = [
    ("forum", r"DiscussionForumPosting|QAPage|vbulletin|phpbb|xenforo|discourse|viewtopic|showthread"),
    ("shop", r"\"@type\"\s*:\s*\"Product\"|og:type\"\s+content=\"product|itemtype=\"https?://schema.org/Product"),
    ("news", r"NewsArticle|ReportageNewsArticle"),
    ("blog", r"BlogPosting|wp-content|blogger\.com|wordpress"),
    ("article", r"og:type\"\s+content=\"article|\"@type\"\s*:\s*\"Article\"|schema.org/Article"),
]


def page_kind(raw: bytes) -> str:
    """What the page says it is (schema.org types, og:type, the software that made it); ``other`` if silent."""
    head = raw[:400_000].decode("utf-8", "replace")
    for kind, pattern in _TYPES:
        if re.search(pattern, head, re.I):
            return kind
    return "other"


def page_markup(raw: bytes) -> str:
    """``semantic`` when the page marks its content (``<article>``, ``<main>``, ``articleBody``), else ``plain``."""
    return "semantic" if re.search(rb"<(article|main)[\s>]|articlebody", raw, re.I) else "plain"


def load_trafeval() -> list[Page]:
    items = json.loads((TRAFEVAL / "evaldata.json").read_text(encoding="utf-8"))
    pages = []
    for url, item in items.items():
        path = TRAFEVAL / "cache" / item["file"]
        if not path.is_file():
            path = TRAFEVAL / "eval" / item["file"]
        host = _hard_host(url.removeprefix("hard::")) if url.startswith("hard::") else _host(url)
        pages.append(Page("trafeval", url, path.read_bytes(), domain=host, with_=item["with"], without=item["without"]))
    return pages


def load_aeb() -> list[Page]:
    truth = json.loads((AEB / "ground-truth.json").read_text(encoding="utf-8"))
    return [
        Page(
            "aeb",
            i,
            gzip.decompress((AEB / "html" / f"{i}.html.gz").read_bytes()),
            domain=_host(truth[i]["url"]),
            lang="en",
            gold=truth[i]["articleBody"],
        )
        for i in sorted(truth)
    ]


def _readability_host(folder: Path, raw: bytes) -> str:
    """The site of a Readability test page: its canonical or og:url, else the test's own name."""
    m = re.search(rb"""(?:rel=["']canonical["'][^>]*href|property=["']og:url["'][^>]*content)=["']([^"']+)""", raw)
    return _host(m.group(1).decode("utf-8", "replace")) if m else folder.name


def load_readability() -> list[Page]:
    pages = []
    for folder in sorted(d for d in READABILITY.iterdir() if (d / "source.html").exists()):
        raw = (folder / "source.html").read_bytes()
        gold = html_text((folder / "expected.html").read_text(encoding="utf-8"))
        pages.append(Page("readability", folder.name, raw, domain=_readability_host(folder, raw), gold=gold))
    return pages


def _languages(pages: list[Page]) -> None:
    """lid.176 on each page's gold text (``with`` snippets or reference), where the set does not give one."""
    import pyarrow as pa

    from mdf_text.ops.language import LanguageModel

    todo = [p for p in pages if not p.lang]
    texts = [" ".join(p.with_) if p.set == "trafeval" else p.gold for p in todo]
    labels, _ = LanguageModel().predict(pa.array(texts, pa.string()), 2000)
    for page, label in zip(todo, labels.to_pylist(), strict=True):
        page.lang = label or "?"


def load(sets: tuple[str, ...] = SETS) -> list[Page]:
    """The pages of ``sets``, with domain, language and kind filled in; exits naming the folder if data is absent."""
    for name, folder in (("trafeval", TRAFEVAL), ("aeb", AEB), ("readability", READABILITY)):
        if name in sets and not folder.is_dir():
            raise SystemExit(f"skipped: the labelled pages are not at {folder} (see ../shared/data/README.md)")
    loaders = {"trafeval": load_trafeval, "aeb": load_aeb, "readability": load_readability}
    pages = [p for s in sets for p in loaders[s]()]
    for page, domain in zip(pages, registered_domains([p.domain for p in pages]), strict=True):
        page.domain = domain
        page.kind = page_kind(page.raw)
        page.markup = page_markup(page.raw)
    _languages(pages)
    return pages
